"""How to install an extra, in the form that works for the install at hand: ``pip install -e ".[train]"`` only
works inside a clone, ``pip install "snipsnap[train]"`` for a package installed from a wheel or an index."""

from __future__ import annotations

from pathlib import Path

_SOURCE = Path(__file__).resolve().parent.parent  # the folder holding this package


def in_clone() -> bool:
    """Whether this package runs from a source tree (an editable install or a checkout on the path), not from
    an installed copy in site-packages."""
    return (_SOURCE / "pyproject.toml").is_file() and (_SOURCE / "snipsnap_env").is_dir()


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` for this install.

    >>> install_hint("train") in ('pip install -e ".[train]"', 'pip install "snipsnap[train]"')
    True
    """
    return f'pip install -e ".[{extra}]"' if in_clone() else f'pip install "snipsnap[{extra}]"'
