"""JUnit XML: a test suite per checked file (and per other file with findings), a test case per finding.

Errors and warnings are failures; info findings are passing cases that say
what they noticed. A checked file without findings is a suite with one passing
case, so that CI dashboards show every file that was checked; a run that
checked no file is one passing case, so that they show that the check ran.
"""

from __future__ import annotations

import re
from collections import defaultdict
from xml.etree import ElementTree

from ci_checks.core.diagnostics import Diagnostic
from ci_checks.engine.outcome import Outcome
from ci_checks.reporters import docs, text

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(value: str) -> str:
    """Characters XML 1.0 cannot hold (a checked file may contain any) written as `\\xNN`."""
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", value)


def _case(suite: ElementTree.Element, diagnostic: Diagnostic, excerpt: str) -> None:
    span = diagnostic.span
    name = f"{diagnostic.code} {diagnostic.rule} at {span.line}:{span.column}"
    case = ElementTree.SubElement(suite, "testcase", name=_xml_text(name), classname=_xml_text(span.path))
    link = docs.url(diagnostic.code, diagnostic.url)
    body = _xml_text(f"{text.header(diagnostic)}\n{excerpt}".rstrip() + (f"\n  = help: {link}" if link else ""))
    if diagnostic.severity.fails:
        failure = ElementTree.SubElement(case, "failure", message=_xml_text(diagnostic.message), type=diagnostic.code)
        failure.text = body
    else:
        ElementTree.SubElement(case, "system-out").text = body


def render(outcome: Outcome) -> str:
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for diagnostic in outcome.diagnostics:
        by_file[diagnostic.span.path].append(diagnostic)
    files = sorted({*outcome.checked, *by_file})
    failures = sum(1 for d in outcome.diagnostics if d.severity.fails)
    cases = sum(max(len(by_file.get(path, ())), 1) for path in files)
    root = ElementTree.Element("testsuites", name="ci-checks", tests=str(max(cases, 1)))
    root.set("failures", str(failures))
    if not files:
        suite = ElementTree.SubElement(root, "testsuite", name="ci-checks", tests="1", failures="0", errors="0")
        ElementTree.SubElement(suite, "testcase", name=f"{outcome.files} files checked", classname="ci-checks")
    for path in files:
        found = by_file.get(path, [])
        failed = sum(1 for d in found if d.severity.fails)
        suite = ElementTree.SubElement(
            root, "testsuite", name=_xml_text(path), tests=str(max(len(found), 1)), failures=str(failed), errors="0"
        )
        if not found:
            ElementTree.SubElement(suite, "testcase", name="no problems found", classname=_xml_text(path))
        for diagnostic in found:
            _case(suite, diagnostic, "\n".join(text.excerpt(diagnostic.span, outcome.sources.get(path))))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
