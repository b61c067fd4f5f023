"""Reference tables generated from symproof's own data at build time, so a page cannot drift from the code.

``{symproof-table} NAME`` renders one of :data:`TABLES` (Markdown, parsed by MyST); ``{symproof-kernel}
TARGET`` exports the plain RoPE kernel for one target and shows its calling interface; the role
``{symproof-fact}`\\`NAME\\``` prints one counted fact (:data:`FACTS`).  The tables and facts are made by
:mod:`symproof_tables`, which needs no Sphinx (the tests import it with only the test extra installed).
A name that is not known, or a code table that has a row the hand-written part does not describe, is a
build warning, which ``sphinx-build -W`` turns into an error.

Math (``$...$``, ``$$...$$``) is printed as MathML at build time (``html_math_renderer = "mathml"``): no
JavaScript and no network, as in the chapter report.  When the build finishes, the committed chapter report (``reports/``) is copied to ``report/`` of the
built site, so that the report page can link to it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

sys.path.insert(0, str(Path(__file__).resolve().parent))
from symproof_tables import FACTS, KERNEL_TARGETS, REPO, TABLES, TableError, kernel_interface  # noqa: E402

LOG = logging.getLogger(__name__)


class TableDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        name = self.arguments[0]
        if name not in TABLES:
            raise self.error(f"symproof-table: unknown table {name!r}; expected one of {sorted(TABLES)}")
        try:
            lines = TABLES[name]()
        except TableError as error:
            raise self.error(f"symproof-table {name}: {error}") from None
        container = nodes.container(classes=["symproof-generated"])
        self.state.nested_parse(StringList(lines), self.content_offset, container)
        return [container]


class FactRole(SphinxRole):
    def run(self):
        if self.text not in FACTS:
            msg = self.inliner.reporter.error(f"symproof-fact: unknown fact {self.text!r}; expected one of "
                                              f"{sorted(FACTS)}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.Text(FACTS[self.text]())], []


class KernelDirective(SphinxDirective):
    required_arguments = 1

    def run(self):
        target = self.arguments[0]
        if target not in KERNEL_TARGETS:
            raise self.error(f"symproof-kernel: unknown target {target!r}; expected one of {sorted(KERNEL_TARGETS)}")
        try:
            language, text = kernel_interface(target)
        except (TableError, StopIteration) as error:
            raise self.error(f"symproof-kernel {target}: {error}") from None
        block = nodes.literal_block(text, text, language=language)
        return [block]


# -- math as MathML, printed at build time (no JavaScript, no network: as the chapter report) -------------


def _mathml(latex: str, display: str) -> str:
    from latex2mathml.converter import convert

    return convert(latex, display=display)


def _visit_inline_math(self, node) -> None:
    self.body.append(_mathml(node.astext(), "inline"))
    raise nodes.SkipNode


def _visit_block_math(self, node) -> None:
    self.body.append(f'<div class="math-block">{_mathml(node.astext(), "block")}</div>')
    raise nodes.SkipNode


def copy_report(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = REPO / "reports"
    if not (source / "index.html").is_file():
        LOG.warning("reports/index.html is missing: run `symproof report` before building the docs")
        return
    target = Path(app.outdir) / "report"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.pdf", "*.aux", "*.log", ".symproof-manifest.json"))


def setup(app):
    app.add_directive("symproof-table", TableDirective)
    app.add_directive("symproof-kernel", KernelDirective)
    app.add_role("symproof-fact", FactRole())
    app.connect("build-finished", copy_report)
    app.add_html_math_renderer("mathml", (_visit_inline_math, None), (_visit_block_math, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
