"""Jobs never import jobs: what two jobs share lives in ``train/learn``, ``train/measure`` or ``train/runner``, so a
job file is only a job (its flags, its checks, its work); and the training library has no import circle."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOBS = {path.stem for path in (ROOT / "train").glob("*.py") if path.stem != "__init__"}


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute (``train.x``), at the top or inside a function."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # from train import evaluate
    return found


def test_no_job_and_no_library_module_imports_a_job():
    offenders = []
    for path in sorted((ROOT / "train").rglob("*.py")):
        for module in imported_modules(path):
            parts = module.split(".")
            if len(parts) == 2 and parts[0] == "train" and parts[1] in JOBS and parts[1] != path.stem:
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not offenders, offenders


def test_the_run_settings_and_distillation_import_each_other_in_one_direction_only():
    args = imported_modules(ROOT / "train" / "learn" / "args.py")
    distill = imported_modules(ROOT / "train" / "learn" / "distill.py")
    assert "train.learn.distill" in args and not any(m.startswith("train.learn.args") for m in distill)


#: the layers, each importing only those before it: the engine and envs, the agents, the job runner's machinery and
#: the measurements, the training library, the jobs (every other ``train.*`` module)
LAYERS = ("snipsnap_env", "agents", "train.runner", "train.measure", "train.learn", "train")


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of the most specific layer ``module`` lies in (None: not the project's)."""
    found = [i for i, name in enumerate(LAYERS) if module == name or module.startswith(f"{name}.")]
    return max(found) if found else None


def test_every_package_imports_only_the_layers_below_it():
    """No package cycle: train.measure once imported train.learn (a learned best response's training) while
    train.learn imports train.measure for its evaluations."""
    offenders = []
    for top in ("snipsnap_env", "agents", "train"):
        for path in sorted((ROOT / top).rglob("*.py")):
            here = layer_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
            for module in sorted(imported_modules(path)):
                there = layer_of(module)
                if module != "train" and there is not None and there > here:
                    offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not offenders, offenders


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: what another module needs is named without one."""
    offenders = []
    for top in ("snipsnap_env", "agents", "train", "examples"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                    offenders += [f"{path.relative_to(ROOT)} imports {node.module}.{name}" for name in private]
    assert not offenders, offenders
