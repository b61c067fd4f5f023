"""Census: how many of the installed transformers' own rotary modules ``symproof audit`` takes with one
plain command (no ``--call``), and what it says of them.

Each rotary text-model type (as ``families_census.py`` finds them) is audited as a user would: its
``<Name>RotaryEmbedding`` class, named by module path, against the type's own config (its config class's
defaults, written to a ``config.json``)::

    symproof audit transformers.models.llama.modeling_llama:LlamaRotaryEmbedding --like config.json

Code written outside this project, correct by construction against its own config: every verdict but
*equivalent* (or *equivalent after relayout*) is either a refusal (counted, with its line) or a correct
implementation declared wrong (``WRONG``: the number that must stay 0).  A type whose config
``symproof check`` refuses is counted apart (``like refused``): that is the config reader's reach
(``families_census.py``), not the audit's.

One JSON line per type, then a summary.  Usage:
``python benchmarks/audit_census.py OUT.jsonl [TYPES...]`` (about 5 s per type).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from families_census import rotary_types, text_model  # noqa: E402

TIMEOUT = 180


def rotary_class(model_type: str) -> tuple[str, str] | None:
    """``(module, class)`` of the type's text rotary module, or ``None`` when it defines none by that name.

    The text model's own type decides where to look (MusicFlamingo's text model is a Qwen2: its module is
    Qwen2's, not MusicFlamingo's audio rotary); an encoder type takes its module's encoder class."""
    import transformers
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    try:
        text_type = transformers.AutoConfig.for_model(model_type).get_text_config(decoder=True).model_type
    except Exception:  # noqa: BLE001 - text_model() reports a config class that fails
        text_type = model_type
    if text_type and text_type != model_type and model_type_to_module_name(text_type) != \
            model_type_to_module_name(model_type):
        model_type = text_type
    name = model_type_to_module_name(model_type)
    folder = os.path.join(os.path.dirname(transformers.models.__file__), name)
    modeling = os.path.join(folder, f"modeling_{name}.py")
    if not os.path.isfile(modeling):
        return None
    with open(modeling, encoding="utf-8") as handle:
        classes = re.findall(r"^class (\w*RotaryEmbedding)\(", handle.read(), flags=re.MULTILINE)
    if model_type.endswith("_encoder"):  # the type is the encoder: its rotary is the encoder's
        encoder = [c for c in classes if "Encoder" in c]
        return (f"transformers.models.{name}.modeling_{name}", sorted(encoder, key=len)[0]) if encoder else None
    text = [c for c in classes if not re.search(r"Vision|Audio|Image|Video|Visual|Encoder", c)]
    if not text:
        return None
    return f"transformers.models.{name}.modeling_{name}", sorted(text, key=len)[0]


def outcome(report: dict | None, stderr: str, code: int, config: str) -> tuple[str, str]:
    if report is not None:
        verdict = report.get("verdict", "")
        if verdict in ("equivalent", "equivalent_after_relayout"):
            return "plain", verdict
        if verdict == "differs":
            return "WRONG", "; ".join(report.get("whats", []) or [verdict])
        return verdict or "error", ""
    line = next((text for text in stderr.strip().splitlines()[::-1] if text.strip()), "")
    if "Traceback" in stderr:
        return "error", line[:300]
    if config in line and "--regime" not in line:  # the config's reader refused it, before any code ran
        return "like refused", line[:300]
    return "refused", line[:300]


def main() -> None:
    out_path = sys.argv[1]
    import transformers

    transformers.logging.set_verbosity_error()
    types = sys.argv[2:] or rotary_types()
    counts: dict[str, int] = {}
    symproof = [sys.executable, "-m", "symproof"]
    with open(out_path, "w", encoding="utf-8") as out, tempfile.TemporaryDirectory() as tmp:
        for model_type in types:
            start = time.time()
            entry: dict = {"model_type": model_type}
            why = text_model(model_type)
            target = None if why else rotary_class(model_type)
            if why or target is None:
                entry.update(outcome="excluded", why=why or "no text *RotaryEmbedding class")
            else:
                config = transformers.AutoConfig.for_model(model_type)
                path = os.path.join(tmp, f"{model_type}.json")
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(config.to_json_string())
                entry["target"] = f"{target[0]}:{target[1]}"
                try:
                    run = subprocess.run([*symproof, "audit", entry["target"], "--like", path, "--json"],
                                         capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp)
                    try:
                        report = json.loads(run.stdout) if run.stdout.strip().startswith("{") else None
                    except json.JSONDecodeError:
                        report = None
                    entry["outcome"], entry["why"] = outcome(report, run.stderr, run.returncode, path)
                    entry["exit"] = run.returncode
                except subprocess.TimeoutExpired:
                    entry.update(outcome="refused", why=f"timeout ({TIMEOUT} s)")
            entry["seconds"] = round(time.time() - start, 1)
            counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
            out.write(json.dumps(entry) + "\n")
            out.flush()
        summary = {"types": len(types), **counts, "transformers": transformers.__version__}
        out.write(json.dumps({"summary": summary}) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
