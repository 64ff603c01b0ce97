"""Record GitHub's verdict on every workflow shape of `tests/ci/linter/model/github_shapes.py`.

    python scripts/regenerate_github_verdicts.py

installs `@actions/workflow-parser` (the parser behind GitHub's workflow
editor and language server) with npm into a temporary folder, runs
`scripts/github_verdicts.mjs` there with node over every shape, and writes
`tests/ci/fixtures/github-verdicts.json`: each shape's YAML, whether GitHub
accepts it, and GitHub's error messages. Needs node 20 or later and npm; the
tests read only the recorded file.

Under node 20 the package's two `import ... from "*.json"` statements need an
import attribute (`with {type: "json"}`); they are patched in the temporary
copy, which is deleted afterwards. The parser's `allowBackgroundSteps` feature
is turned on (GitHub runs background steps); the recording names it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from tests.ci.linter.model.github_shapes import shapes  # noqa: E402

PACKAGE = "@actions/workflow-parser"
VERSION = "0.3.61"
VERDICTS = PROJECT / "tests" / "ci" / "fixtures" / "github-verdicts.json"
_JSON_IMPORTS = ("dist/actions/action-schema.js", "dist/workflows/workflow-schema.js")


def _patch_json_imports(package: Path) -> None:
    for relative in _JSON_IMPORTS:
        path = package / relative
        text = path.read_text(encoding="utf-8")
        if 'with {type: "json"}' not in text:
            patched = text.replace('.min.json";', '.min.json" with {type: "json"};')
            if patched == text:
                raise SystemExit(f"{relative}: no JSON import to patch; has the package changed?")
            path.write_text(patched, encoding="utf-8")


def main() -> int:
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        print("regenerating the verdicts needs node and npm", file=sys.stderr)
        return 2
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    all_shapes = shapes()
    with tempfile.TemporaryDirectory(prefix="workflow-parser-") as folder:
        work = Path(folder)
        (work / "package.json").write_text('{"private": true, "type": "module"}\n', encoding="utf-8")
        subprocess.run(
            [npm, "install", "--silent", "--no-audit", "--no-fund", f"{PACKAGE}@{VERSION}"], cwd=work, check=True
        )
        _patch_json_imports(work / "node_modules" / PACKAGE)
        shutil.copy(PROJECT / "scripts" / "github_verdicts.mjs", work / "verdicts.mjs")
        request = json.dumps([{"id": shape.id, "yaml": shape.yaml} for shape in all_shapes])
        result = subprocess.run(
            [node, "verdicts.mjs"], cwd=work, input=request, capture_output=True, text=True, check=True
        )
    verdicts = {item["id"]: item["errors"] for item in json.loads(result.stdout)}
    recorded = {
        "parser": f"{PACKAGE} {VERSION} with allowBackgroundSteps",
        "node": node_version,
        "shapes": [
            {"id": shape.id, "accepted": not verdicts[shape.id], "errors": verdicts[shape.id], "yaml": shape.yaml}
            for shape in all_shapes
        ],
    }
    VERDICTS.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    accepted = sum(1 for shape in recorded["shapes"] if shape["accepted"])
    print(f"{len(all_shapes)} shapes: {accepted} accepted, {len(all_shapes) - accepted} rejected -> {VERDICTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
