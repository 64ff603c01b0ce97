"""ci-checks' own imports resolve only to installed packages, whatever a test run puts on `sys.path`.

pytest adds folders of the checked repository to `sys.path` (its `pythonpath`
setting, the folders of conftest.py files and of test modules, the current
folder), ahead of the installed packages, and pytest 9 does so before it loads
plugins. A repository's `lib/yaml.py`, or `tomllib.py`, or any module name
ci-checks or a library it uses imports for the first time while it runs,
would be run in its place. So while ci-checks' code is on the stack (a
fixture, a policy item, `CIRepository.check` called from a test), `InstalledOnly`
answers every import of a top-level module itself: a built-in or frozen
module, else one found in the installed locations (`installed_locations`) and
nowhere else; a name found only elsewhere is a ModuleNotFoundError, a name
found nowhere the usual None of `find_spec`. Imports by other code, and by the
checkpoint harness (which runs the checked project's code on purpose), are
left to Python as they are.

This module imports nothing that Python and pytest have not imported already.
"""

from __future__ import annotations

import os
import site
import sys
from importlib import machinery
from pathlib import Path
from types import FrameType, ModuleType

_OWN = __name__.partition(".")[0]


def installed_locations() -> list[str]:
    """Where installed modules are, real paths: the standard library (and its extension modules and zip), the
    site-packages folders, the folders their `.pth` files add (editable installs), and ci-checks' own."""
    standard = Path(os.__file__).parent
    found = [standard, standard / "lib-dynload"]
    found += [Path(entry) for entry in sys.path if entry.endswith(".zip") and _under_a_prefix(entry)]
    found += [Path(prefix, "DLLs") for prefix in (sys.base_prefix, sys.prefix)]  # Windows' extension modules
    folders = [Path(folder) for folder in site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        folders.append(Path(site.getusersitepackages()))
    for folder in folders:
        found += [folder, *_pth_entries(folder)]
    found.append(Path(sys.modules[_OWN].__file__ or ".").parent.parent)
    real = (os.path.realpath(entry) for entry in found if entry.is_dir() or entry.suffix == ".zip")
    return list(dict.fromkeys(real))


def _under_a_prefix(entry: str) -> bool:
    real = Path(os.path.realpath(entry))
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return any(real.is_relative_to(os.path.realpath(prefix)) for prefix in prefixes)


def _pth_entries(folder: Path) -> list[Path]:
    """The folders the `.pth` files of a site-packages folder add, as `site` reads them (not their `import` lines)."""
    try:
        files = sorted(path for path in folder.iterdir() if path.suffix == ".pth")
    except OSError:
        return []
    entries = []
    for file in files:
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        paths = (line.rstrip() for line in lines if not line.startswith(("#", "import ", "import\t")))
        entries += [folder / path for path in paths if path]
    return entries


def within(path: str, locations: list[str]) -> bool:
    """Whether a module's file lies in one of the installed locations."""
    real = os.path.realpath(path)
    return any(real == location or real.startswith(location + os.sep) for location in locations)


class InstalledOnly:
    """A `sys.meta_path` finder for the imports ci-checks' code makes (see the module)."""

    def __init__(self) -> None:
        self._path: list[str] | None = None

    @property
    def path(self) -> list[str]:
        """The installed locations, in `sys.path`'s order where they are on it."""
        if self._path is None:
            locations = installed_locations()
            ordered = [entry for entry in sys.path if entry and os.path.realpath(entry) in locations]
            self._path = list(dict.fromkeys([*ordered, *locations]))
        return self._path

    def find_spec(
        self, name: str, path: object = None, target: ModuleType | None = None
    ) -> machinery.ModuleSpec | None:
        if path is not None or not _own_code_on_stack(sys._getframe(1)):
            return None  # a submodule is found through its package, which was found here
        for finder in (machinery.BuiltinImporter, machinery.FrozenImporter):
            spec = finder.find_spec(name)
            if spec is not None:
                return spec
        spec = machinery.PathFinder.find_spec(name, self.path) or self._from_other_finders(name)
        if spec is None and machinery.PathFinder.find_spec(name) is not None:
            raise ModuleNotFoundError(f"No module named {name!r} among the installed packages", name=name)
        return spec  # None where no folder on sys.path has it either: the usual "no module named"

    def _from_other_finders(self, name: str) -> machinery.ModuleSpec | None:
        """What the other finders on `sys.meta_path` find (an editable install's), less those that search
        `sys.path` (pytest's, which rewrites test modules' assertions)."""
        for finder in sys.meta_path:
            if finder is self or finder is machinery.PathFinder or type(finder).__module__.startswith("_pytest"):
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(name, None) if find is not None else None
            if spec is not None:
                return spec  # type: ignore[no-any-return]
        return None

    def invalidate_caches(self) -> None:
        self._path = None


_IMPORTS_THE_PROJECT = f"{_OWN}_checkpoint"
"""The checkpoint harness, which imports the checked project's own code (its patches, Megatron) on purpose."""


def _own_code_on_stack(frame: FrameType | None) -> bool:
    """Whether the innermost of ci-checks' frames on the stack is one of its checks (not the checkpoint harness)."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if isinstance(name, str) and (name == _IMPORTS_THE_PROJECT or name.startswith(_IMPORTS_THE_PROJECT + ".")):
            return False
        if isinstance(name, str) and (name == _OWN or name.startswith(_OWN + ".")):
            return True
        frame = frame.f_back
    return False


def install() -> InstalledOnly:
    """The finder, first on `sys.meta_path` (put there once)."""
    for finder in sys.meta_path:
        if isinstance(finder, InstalledOnly):
            return finder
    finder = InstalledOnly()
    sys.meta_path.insert(0, finder)
    return finder
