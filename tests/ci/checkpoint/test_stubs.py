"""`--stub-missing-imports` in this process: a project module (written into tmp_path, imported from there as a
checkout is) that imports packages no registry has, and Megatron-LM's `megatron.training` beside the real
`megatron.core`, gets stubs that survive a decorator, a base class and an annotation at import; installed
modules, imports made by installed code or by the harness, and the project's own missing submodules get
none; the stubs are gone from `sys.modules` afterwards. And a setup's raise: after a swap it is reported
beside the run, before any swap it is a usage error naming where; a setup never sees the harness's argv.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_checks_checkpoint import project, stubs
from ci_checks_checkpoint.options import UsageError, installed

pytestmark = pytest.mark.checkpoint

HAS_MEGATRON = installed("megatron.core")
# megatron-core's wheel has no megatron.training; a Megatron-LM checkout on the path has it, and then it is real.
MEGATRON_TRAINING_MISSING = HAS_MEGATRON and not installed("megatron.training")

TOOL = """
import json

import absent_cluster
from absent_serving_engine.srt import server_args
from absent_serving_engine.srt.server_args import ServerArgs


@absent_cluster.remote
def convert(shard):
    return shard


@absent_cluster.remote(num_gpus=1)
class Worker(absent_cluster.actor.ActorClass):
    pass


class Arguments(ServerArgs):
    def __init__(self, path: str) -> None:
        self.path = path


ARGUMENTS = Arguments("checkpoints/hf")
REFERENCE: absent_cluster.ObjectRef[int] | None = None
"""


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project's checkout on sys.path, as the working directory is; its modules forgotten afterwards."""
    package = tmp_path / "shipping_project"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield package
    for name in set(sys.modules) - before:
        if name.startswith("shipping_project"):
            del sys.modules[name]


def _module(package: Path, name: str, source: str) -> str:
    (package / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    importlib.invalidate_caches()
    return f"shipping_project.{name}"


def test_the_project_s_missing_packages_get_stubs_that_work_at_import_and_are_gone_afterwards(
    checkout: Path,
) -> None:
    name = _module(checkout, "tool", TOOL)
    with stubs.missing_imports_stubbed(True, [name]) as made:
        tool = importlib.import_module(name)
    assert made == [
        "absent_cluster",
        "absent_serving_engine",
        "absent_serving_engine.srt",
        "absent_serving_engine.srt.server_args",
    ]
    assert tool.ARGUMENTS.path == "checkpoints/hf"  # a class of the project's derived from a stub is its own
    assert isinstance(tool.ARGUMENTS, tool.ServerArgs)
    assert tool.server_args.ServerArgs is tool.ServerArgs
    assert tool.absent_cluster.remote is tool.absent_cluster.remote
    assert repr(tool.Worker) == "<stub absent_cluster.remote()()>"
    assert tool.convert(3).remote().result is not None  # a call of a stub is another stub
    assert tool.json is sys.modules["json"]
    for stubbed in made:
        assert stubbed not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("absent_cluster")
    assert not stubs.active()


@pytest.mark.skipif(not MEGATRON_TRAINING_MISSING, reason="needs megatron-core's wheel without megatron.training")
def test_a_missing_submodule_of_an_installed_package_is_stubbed_beside_its_real_ones(checkout: Path) -> None:
    name = _module(
        checkout,
        "trainer",
        """
        import megatron.core
        from megatron.training import get_args
        from megatron.training.arguments import parse_args
        """,
    )
    with stubs.missing_imports_stubbed(True, [name]) as made:
        trainer = importlib.import_module(name)
    assert made == ["megatron.training", "megatron.training.arguments"]
    assert trainer.megatron.core.__file__ is not None  # the real one, never shadowed
    assert repr(trainer.get_args) == "<stub megatron.training.get_args>"
    assert "megatron.training" not in sys.modules
    assert not hasattr(sys.modules["megatron"], "training")


def test_installed_code_the_harness_and_the_project_s_own_missing_modules_get_no_stub(checkout: Path) -> None:
    broken = _module(checkout, "broken", "from shipping_project import helpers_not_written_yet\n")
    with stubs.missing_imports_stubbed(True, [broken]) as made:
        # an installed module stays itself
        assert importlib.import_module("torch").__file__ is not None
        # an import made by the standard library (pkgutil's): its ImportError keeps its meaning
        with pytest.raises(ModuleNotFoundError):
            pkgutil.resolve_name("absent_cluster")
        # a presence check made through importlib.util says absent
        assert importlib.util.find_spec("absent_cluster") is None
        # the harness's own import of a module named with --import
        with pytest.raises(UsageError, match=r"^--import absent_cluster: ModuleNotFoundError: No module named"):
            project.import_modules(["absent_cluster"])
        # a module the project's own package lacks is a fault of the project
        with pytest.raises(ImportError, match="cannot import name 'helpers_not_written_yet'"):
            importlib.import_module(broken)
    assert made == []


def test_without_the_option_a_missing_package_is_a_usage_error_that_names_it_and_the_option(checkout: Path) -> None:
    name = _module(checkout, "tool", TOOL + "\ndef main():\n    pass\n")
    with pytest.raises(UsageError) as raised:
        project.prepare(None, [], [f"{name}:main"])
    assert str(raised.value) == (
        f"--setup {name}:main: importing {name}: ModuleNotFoundError: No module named 'absent_cluster' "
        "(absent_cluster is not installed here: --stub-missing-imports gives the project's code a stub of it)"
    )


def test_a_setup_sees_its_own_program_name_as_argv_never_the_harness_s(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _module(
        checkout,
        "cli",
        """
        import sys

        at_import = list(sys.argv)
        seen = []

        def main():
            seen.append(list(sys.argv))
        """,
    )
    monkeypatch.setattr(sys, "argv", ["/opt/ci-checks/worker.py", "/tmp/run-folder"])
    assert project.prepare(None, [], [f"{name}:main"]) == project.Prepared(None, ())
    cli = sys.modules[name]
    assert cli.at_import == [name]
    assert cli.seen == [[name]]
    assert sys.argv == ["/opt/ci-checks/worker.py", "/tmp/run-folder"]


@pytest.fixture
def megatron_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """The setups below replace Megatron-Core's writer and default save strategy here: put them back afterwards."""
    from megatron.core.dist_checkpointing.strategies import base, filesystem_async

    monkeypatch.setattr(filesystem_async, "FileSystemWriterAsync", filesystem_async.FileSystemWriterAsync)
    monkeypatch.setattr(base, "default_strategies", base.default_strategies.copy())
    monkeypatch.setitem(base.default_strategies, "save_sharded", dict(base.default_strategies["save_sharded"]))


SWAPS = """
import torch
from megatron.core.dist_checkpointing.strategies import base, filesystem_async
from megatron.core.dist_checkpointing.strategies.torch import TorchDistSaveShardedStrategy


class BlockingWriter(filesystem_async.FileSystemWriterAsync):
    pass


class OwnStrategy(TorchDistSaveShardedStrategy):
    pass


def _model_config():
    raise KeyError("num_layers")


def swap_the_writer_then_fail():
    filesystem_async.FileSystemWriterAsync = BlockingWriter
    _model_config()


def register_a_strategy_then_exit():
    base.register_default_strategy(base.StrategyAction.SAVE_SHARDED, "torch_dist", 1, OwnStrategy("torch_dist", 1))
    raise SystemExit(3)


def fail_before_any_swap():
    _model_config()
    filesystem_async.FileSystemWriterAsync = BlockingWriter
"""


@pytest.mark.skipif(not HAS_MEGATRON, reason="needs megatron-core: pip install -e '.[megatron]'")
def test_a_setup_that_raises_after_a_swap_is_reported_and_the_run_goes_on(
    checkout: Path, megatron_as_it_was: None
) -> None:
    name = _module(checkout, "swaps", SWAPS)
    where = f"{checkout / 'swaps.py'}:16 in _model_config"
    raised = project.call_setups([f"{name}:swap_the_writer_then_fail", f"{name}:register_a_strategy_then_exit"])
    assert raised == [
        project.SetupRaised(
            f"{name}:swap_the_writer_then_fail",
            "KeyError: 'num_layers'",
            where,
            (f"strategies.filesystem_async.FileSystemWriterAsync (now {name}.BlockingWriter)",),
        ),
        project.SetupRaised(
            f"{name}:register_a_strategy_then_exit",
            "SystemExit (sys.exit(3))",
            f"{checkout / 'swaps.py'}:26 in register_a_strategy_then_exit",
            (f"the default save strategy ('torch_dist', 1) (now {name}.OwnStrategy)",),
        ),
    ]


@pytest.mark.skipif(not HAS_MEGATRON, reason="needs megatron-core: pip install -e '.[megatron]'")
def test_a_setup_that_raises_before_any_swap_is_a_usage_error_naming_where(
    checkout: Path, megatron_as_it_was: None
) -> None:
    name = _module(checkout, "swaps", SWAPS)
    with pytest.raises(UsageError) as raised:
        project.call_setups([f"{name}:fail_before_any_swap"])
    assert str(raised.value) == (
        f"--setup {name}:fail_before_any_swap: raised KeyError: 'num_layers' ({checkout / 'swaps.py'}:16 in "
        "_model_config); --setup-may-raise judges the run on what is in effect instead"
    )


def test_with_may_raise_a_setup_that_raises_having_replaced_nothing_is_reported_with_nothing_replaced(
    checkout: Path, megatron_as_it_was: None
) -> None:
    name = _module(checkout, "swaps", SWAPS)
    [raised] = project.call_setups([f"{name}:fail_before_any_swap"], may_raise=True)
    assert (raised.setup, raised.exception, raised.replaced) == (
        f"{name}:fail_before_any_swap",
        "KeyError: 'num_layers'",
        (),
    )
