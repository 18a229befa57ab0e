"""numba's cache entries of a module are dropped when the kernel's sources change, and only then."""

from __future__ import annotations

from snipsnap_env import jit_cache


def test_cache_entries_are_dropped_when_the_kernel_sources_change(tmp_path, monkeypatch):
    module = tmp_path / "fast.py"
    module.write_text("")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    source = tmp_path / "kernel.py"
    source.write_text("version 1")
    monkeypatch.setattr(jit_cache, "SOURCES", (source,))

    def entries():
        return sorted(p.name for p in cache.iterdir() if p.suffix in (".nbi", ".nbc"))

    def compile_():
        for name in ("fast.step-10.py311.nbi", "fast.step-10.py311.1.nbc"):
            (cache / name).write_text("")

    (cache / "other.step-3.py311.nbi").write_text("")  # another module's entry is not ours to drop

    compile_()
    jit_cache.drop_if_sources_changed(str(module))  # first import: no stamp yet, so nothing is trusted
    assert entries() == ["other.step-3.py311.nbi"]
    compile_()
    jit_cache.drop_if_sources_changed(str(module))  # same sources: the cache stays
    assert entries() == ["fast.step-10.py311.1.nbc", "fast.step-10.py311.nbi", "other.step-3.py311.nbi"]
    source.write_text("version 2")  # (a new process, as after a git pull: the hash is read afresh)
    jit_cache._digest.cache_clear()
    jit_cache.drop_if_sources_changed(str(module))
    assert entries() == ["other.step-3.py311.nbi"]
