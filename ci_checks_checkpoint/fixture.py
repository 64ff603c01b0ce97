"""The pytest fixture `checkpoint_harness`, registered with pytest when ci-checks is installed: the Python API
(`ci_checks_checkpoint.api.check_saves`) with the test's tmp_path as its workdir.

    def test_rocm_save_path(checkpoint_harness, args):
        setup = functools.partial(initialize_model_and_optimizer, args, role="actor")
        checkpoint_harness(setup=setup, as_platform="rocm", crash_test=1).assert_passed()

torch is imported only when a test calls it: a project that only lints its workflows never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ci_checks_checkpoint.api import Checked


@pytest.fixture
def checkpoint_harness(tmp_path: Path) -> Callable[..., Checked | None]:
    """check_saves(**options), saving under the test's tmp_path unless `workdir` says otherwise."""

    def check(**options: Any) -> Checked | None:
        from ci_checks_checkpoint.api import check_saves

        options.setdefault("workdir", tmp_path)
        return check_saves(**options)

    return check
