"""``hardware_fixtures/*.json``: the schema, its validator, and lookup by sweep.

A fixture is one JSON object:
- ``schema``: ``"inference-katas/hardware-fixture/v1"``; ``name``; ``sweep`` (what the rows
  are, e.g. ``split_kv_decode``, ``gemm_m_sweep``; katas look fixtures up by it);
  ``description``;
- ``gpu``: ``name``, ``id`` (a ``data/gpus`` entry or null), ``sms``, ``memory_gb``,
  ``clocks``; or the string ``"per-row"`` when every row names its own ``gpu``;
- ``software``: ``driver``, ``cuda``, ``torch`` (and anything else that matters, e.g. ``kernel``);
- ``conditions``: the exact conditions (shapes, dtype, ...), an object or a sentence;
- ``rows`` (a non-empty list of objects) or ``tables`` (an object of such lists);
- ``provenance``: ``kind`` is ``measured`` (``device``, ``date`` YYYY-MM-DD, ``command``
  of the recorder, ``recorder`` version), ``published`` (``sources``: each with ``source``
  and ``table``, where in it the numbers are printed) or ``datasheet`` (``sources`` likewise).

Honesty rules the validator enforces: a null in ``gpu`` or ``software`` must be listed in
that object's ``unknown`` (we say what we do not know rather than guess); only the recorder
writes ``measured`` fixtures, and their rows carry the median, min, max and the repetition
count; no key anywhere may declare a value ``interpolated``, ``synthetic``, ``invented`` or
``estimated``: such numbers do not belong in a fixture.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The project's suite points this at a temporary folder to run the hardware tests end to end
# on a recording made with a fake clock; graders never set it.
FIXTURES_DIR = Path(os.environ.get("INFERENCE_KATAS_FIXTURES") or ROOT / "hardware_fixtures")
GPUS_DIR = ROOT / "data" / "gpus"
SCHEMA = "inference-katas/hardware-fixture/v1"
KINDS = ("measured", "published", "datasheet")
FORBIDDEN_KEYS = ("interpolated", "synthetic", "invented", "estimated")
RECORD_COMMAND = "nox -s record -- "
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SWEEP = re.compile(r"^[a-z][a-z0-9_]*$")


class FixtureError(ValueError):
    """A fixture that does not meet the schema; the message lists every problem."""


def _nulls_declared(obj: dict[str, Any], where: str, required: tuple[str, ...]) -> list[str]:
    errors = []
    unknown = obj.get("unknown", [])
    if not isinstance(unknown, list) or not all(isinstance(u, str) for u in unknown):
        return [f"{where}.unknown must be a list of field names"]
    for key in required:
        if key not in obj:
            errors.append(f"{where}.{key} is missing (use null and list it in {where}.unknown)")
    for key, value in obj.items():
        if value is None and key not in unknown:
            errors.append(f"{where}.{key} is null but not listed in {where}.unknown")
    for key in unknown:
        if obj.get(key) is not None:
            errors.append(f"{where}.unknown lists {key!r}, which has a value")
    return errors


def _forbidden(node: Any, path: str) -> list[str]:
    errors = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key.lower() in FORBIDDEN_KEYS and value not in (False, None):
                errors.append(f"{path}.{key}: a fixture holds no {key.lower()} numbers")
            errors += _forbidden(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            errors += _forbidden(value, f"{path}[{i}]")
    return errors


def _sources(prov: dict[str, Any]) -> list[str]:
    sources = prov.get("sources")
    if not isinstance(sources, list) or not sources:
        return [f"provenance.sources must be a non-empty list for kind {prov.get('kind')!r}"]
    errors = []
    for i, s in enumerate(sources):
        if not isinstance(s, dict):
            errors.append(f"provenance.sources[{i}] must be an object")
            continue
        for key in ("source", "table"):
            if not isinstance(s.get(key), str) or not s[key].strip():
                errors.append(f"provenance.sources[{i}].{key} must be a non-empty string")
    return errors


def _all_rows(doc: dict[str, Any]) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    errors: list[str] = []
    rows: list[tuple[str, dict[str, Any]]] = []
    tables: dict[str, Any] = {}
    if "rows" in doc:
        tables["rows"] = doc["rows"]
    if "tables" in doc:
        if not isinstance(doc["tables"], dict) or not doc["tables"]:
            errors.append("tables must be a non-empty object of row lists")
        else:
            tables.update({f"tables.{k}": v for k, v in doc["tables"].items()})
    if not tables:
        errors.append("a fixture needs rows (or tables)")
    for name, table in tables.items():
        if not isinstance(table, list) or not table:
            errors.append(f"{name} must be a non-empty list")
            continue
        for i, row in enumerate(table):
            if not isinstance(row, dict) or not row:
                errors.append(f"{name}[{i}] must be a non-empty object")
            else:
                rows.append((f"{name}[{i}]", row))
    return errors, rows


def validate(doc: Any) -> list[str]:
    """Every way ``doc`` breaks the schema (an empty list when it is valid)."""
    if not isinstance(doc, dict):
        return ["a fixture is a JSON object"]
    errors: list[str] = []
    if doc.get("schema") != SCHEMA:
        errors.append(f"schema must be {SCHEMA!r}")
    for key in ("name", "description"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            errors.append(f"{key} must be a non-empty string")
    if not isinstance(doc.get("sweep"), str) or not _SWEEP.match(doc["sweep"]):
        errors.append("sweep must be a snake_case name")
    if "conditions" not in doc or not isinstance(doc["conditions"], (dict, str)) \
            or not doc["conditions"]:
        errors.append("conditions must be a non-empty object or sentence")
    row_errors, rows = _all_rows(doc)
    errors += row_errors

    gpu = doc.get("gpu")
    if gpu == "per-row":
        for where, row in rows:
            if "gpu" not in row:
                errors.append(f"{where} has no gpu (the fixture's gpu is 'per-row')")
    elif isinstance(gpu, dict):
        errors += _nulls_declared(gpu, "gpu", ("name", "id", "sms", "memory_gb", "clocks"))
        if not isinstance(gpu.get("name"), str):
            errors.append("gpu.name must be a string")
        sms = gpu.get("sms")
        if sms is not None and (isinstance(sms, bool) or not isinstance(sms, int) or sms < 1):
            errors.append("gpu.sms must be a positive int")
        gid = gpu.get("id")
        if gid is not None and not (GPUS_DIR / f"{gid}.json").is_file():
            errors.append(f"gpu.id {gid!r} names no data/gpus entry")
    else:
        errors.append("gpu must be an object (or 'per-row')")

    software = doc.get("software")
    if isinstance(software, dict):
        errors += _nulls_declared(software, "software", ("driver", "cuda", "torch"))
    else:
        errors.append("software must be an object")

    prov = doc.get("provenance")
    if not isinstance(prov, dict) or prov.get("kind") not in KINDS:
        errors.append(f"provenance.kind must be one of {KINDS}")
    elif prov["kind"] == "measured":
        for key in ("device", "date", "command", "recorder"):
            if not isinstance(prov.get(key), str) or not prov[key].strip():
                errors.append(f"provenance.{key} must be a non-empty string for a measurement")
        if isinstance(prov.get("date"), str) and not _DATE.match(prov["date"]):
            errors.append("provenance.date must be YYYY-MM-DD")
        if isinstance(prov.get("command"), str) and not prov["command"].startswith(RECORD_COMMAND):
            errors.append(f"provenance.command must be the recorder's ({RECORD_COMMAND}NAME)")
        if "sources" in prov:
            errors.append("a measured fixture cites no sources: it is this project's recording")
        for where, row in rows:
            for key in ("median_us", "min_us", "max_us"):
                if not isinstance(row.get(key), (int, float)) or isinstance(row.get(key), bool) \
                        or not row[key] > 0:
                    errors.append(f"{where}.{key} must be a positive number")
            reps = row.get("repetitions")
            if isinstance(reps, bool) or not isinstance(reps, int) or reps < 3:
                errors.append(f"{where}.repetitions must be an int >= 3")
            elif all(isinstance(row.get(k), (int, float)) for k in ("median_us", "min_us", "max_us")) \
                    and not row["min_us"] <= row["median_us"] <= row["max_us"]:
                errors.append(f"{where}: min <= median <= max does not hold")
    else:
        errors += _sources(prov)
    errors += _forbidden(doc, "$")
    return errors


def load(path: Path) -> dict[str, Any]:
    """Read and validate one fixture; ``FixtureError`` lists every problem."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise FixtureError(f"{path}: cannot read: {exc}") from exc
    errors = validate(doc)
    if errors:
        raise FixtureError(f"{path}: " + "; ".join(errors))
    doc["_path"] = str(Path(path).relative_to(ROOT)) if Path(path).is_relative_to(ROOT) else str(path)
    return doc  # type: ignore[no-any-return]


def paths() -> list[Path]:
    return sorted(FIXTURES_DIR.glob("*.json"))


def load_all() -> list[dict[str, Any]]:
    return [load(p) for p in paths()]


def find(sweep: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Every fixture of ``sweep`` (and provenance ``kind`` when given), validated."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return [f for f in load_all()
            if f["sweep"] == sweep and (kind is None or f["provenance"]["kind"] == kind)]


def validate_gpu_entry(doc: Any) -> list[str]:
    """Every way a ``data/gpus/<id>.json`` datasheet entry breaks its rules.

    The GPUs the fixtures run on are described there (``gpu.id`` points at one): kind
    ``datasheet``, each figure as printed with its sources, doubts listed in ``uncertain``.
    """
    if not isinstance(doc, dict):
        return ["a GPU entry is a JSON object"]
    errors = []
    if doc.get("provenance") != "datasheet":
        errors.append("provenance must be 'datasheet'")
    for key in ("id", "name"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            errors.append(f"{key} must be a non-empty string")
    for key in ("sm_count", "memory_gb", "memory_bandwidth_gb_s"):
        value = doc.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            errors.append(f"{key} must be a positive number")
    sources = doc.get("sources")
    if not isinstance(sources, list) or not sources or not all(
            isinstance(s, str) and s.strip() for s in sources):
        errors.append("sources must be a non-empty list of citations")
    if not isinstance(doc.get("uncertain", []), list):
        errors.append("uncertain must be a list")
    for dtype, figures in (doc.get("tensor_tflops") or {}).items():
        if not isinstance(figures, dict) or not any(k.endswith("source") for k in figures):
            errors.append(f"tensor_tflops.{dtype} must cite its source")
    return errors + _forbidden(doc, "$")
