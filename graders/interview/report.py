"""The reports of a session: the grade as the reports keep it, report.md/.html/.json (the
hiring team's copy), candidate-report.md/.html, and the summary rows across sessions."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

from graders.interview.record import (MarkError, NOT_GRADED, SESSION_FILE, WORK_DIR, clock,
                                      is_running, locked, marks_part, minutes_text, points_text,
                                      read_events, read_json, read_marks_file, seconds_text,
                                      session_info, write_atomic)
from graders.interview.workspace import workspace_diff


def first_line(message: str) -> str:
    """What a failure says, in one line: its first 'E' line (pytest's assertion), else its
    first line."""
    for line in message.splitlines():
        if line.startswith("E "):
            return " ".join(line[1:].split())
    return " ".join(message.strip().splitlines()[0].split()) if message.strip() else ""


def clip(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _first_failure(tests: list[Any]) -> str | None:
    bad = next((t for t in tests if t.outcome in ("failed", "not run")), None)
    if bad is None:
        return None
    return clip(f"{bad.nodeid.split('::')[-1]}: {first_line(bad.message) or bad.outcome}")


def isolation_text(sandbox: dict[str, Any] | None) -> str:
    if sandbox is None:
        return "in-process (no sandbox)"
    parts = [label for key, label in (
        ("separate_uid", "own uid"), ("no_network", "no network"),
        ("hidden_repository", "repository hidden"), ("pid_namespace", "own pids"),
        ("seccomp", "seccomp")) if sandbox.get(key)]
    return str(sandbox.get("backend", "worker process")) + (f" ({', '.join(parts)})"
                                                            if parts else "")


def grade_summary(result: Any) -> dict[str, Any]:
    """What the reports keep of a grade (graders.grade.Grade): the score, the settings,
    and per item its test counts and first failures, public and hidden apart."""
    from graders import grade

    items = []
    for r in result.items:
        public = [t for t in r.tests if t.visibility != "hidden"]
        hidden = [t for t in r.tests if t.visibility == "hidden"]
        items.append({
            "id": r.item.id, "points": r.item.points, "score": r.score, "status": r.status,
            "note": grade.item_note(r), "tests": len(r.tests),
            "passed": sum(t.outcome == "passed" for t in r.tests),
            "public": {"tests": len(public),
                       "passed": sum(t.outcome == "passed" for t in public),
                       "first_failure": _first_failure(public)},
            "hidden": {"tests": len(hidden),
                       "passed": sum(t.outcome == "passed" for t in hidden),
                       "first_failure": _first_failure(hidden)}})
    return {"score": result.score, "max_score": result.max_score,
            "not_counted": int(getattr(result, "not_counted", 0)),
            "public_only": bool(getattr(result, "public_only", False)),
            "seconds": round(float(getattr(result, "seconds", 0.0)), 2),
            "settings": {"profile": result.profile,
                         "seed": "derandomized" if result.seed is None else result.seed,
                         "isolation": isolation_text(getattr(result, "sandbox", None)),
                         "implementation": str(result.impl)},
            "items": items}


def grade_workspace(kata_name: str, work: Path, profile: str) -> tuple[Any, float]:
    """Grade the workspace with the public and hidden tests (graders.grade.run)."""
    from graders import grade

    start = time.monotonic()
    result = grade.run(kata_name, str(work), profile=profile)
    return result, time.monotonic() - start


def report_data(folder: Path, ended: str, time_used: float, graded: dict[str, Any] | None,
                grading_s: float) -> dict[str, Any]:
    """Everything the reports show, as plain data, from the session's folder: session.json,
    events.jsonl (runs, hints), marks.json and the workspace (report.json holds it;
    ``mark`` and ``grade`` re-render the reports from it)."""
    info = session_info(folder)
    events = read_events(folder)
    runs = [{"at": e.get("at", 0.0), "why": e.get("why", ""), "status": e.get("status", {}),
             "failing": e.get("failing", {}), "load_error": e.get("load_error")}
            for e in events if e.get("event") == "run"]
    first_pass: dict[str, float] = {}
    for r in runs:
        for item, st in r["status"].items():
            if st == "passed":
                first_pass.setdefault(item, r["at"])
    work = Path(info.get("workspace", folder / WORK_DIR))
    data = {
        "kata": info["kata"], "title": info.get("title", info["kata"]),
        "candidate": info.get("candidate", "candidate"),
        "started": info.get("started") or time.strftime(
            "%Y-%m-%d %H:%M:%S", time.localtime(info.get("started_wall", 0))),
        "minutes_allowed": info.get("minutes", 0), "time_used_s": round(time_used, 2),
        "grading_s": round(grading_s, 2), "ended": ended,
        "hints_allowed": info.get("hints_allowed", True),
        "hints_taken": [{"at": e.get("at", 0.0), "hint": e.get("hint", "")}
                        for e in events if e.get("event") == "hint"],
        "runs": runs, "first_pass": first_pass, "rubric": info["rubric"],
        "settings": {"profile": info.get("profile", "grade"),
                     "workspace": str(work), "commit": info.get("commit", "unknown"),
                     "stub": info.get("stub_origin", "")},
        "grade": graded, "diff": workspace_diff(work, _stub_of(info), info["kata"]),
        "folder": str(folder),
    }
    data.update(marks_part(read_marks_file(folder)))
    return data


def _stub_of(info: dict[str, Any]) -> dict[str, str]:
    """session.json's stub (an older one held __init__.py's text alone)."""
    stub = info.get("stub", {})
    return {"__init__.py": stub} if isinstance(stub, str) else dict(stub)


def totals(data: dict[str, Any]) -> dict[str, Any]:
    """The combined score: the tests' grade plus the interviewer's marks."""
    marks = data.get("marks", {})
    by_interviewer = [i for i in data["rubric"] if i["graded_by"] != "tests"]
    graded = data.get("grade")
    if graded and graded.get("public_only"):
        graded = None    # a candidate bundle's run of the public tests: not a score
    t_score = graded["score"] if graded else 0
    t_max = graded["max_score"] if graded else sum(i["points"] for i in data["rubric"]
                                                   if i["graded_by"] == "tests")
    i_score = sum(marks[i["id"]]["points"] for i in by_interviewer if i["id"] in marks)
    i_max = sum(i["points"] for i in by_interviewer)
    return {"tests_score": t_score, "tests_max": t_max, "tests_graded": graded is not None,
            "interviewer_score": i_score, "interviewer_max": i_max,
            "unmarked": [i["id"] for i in by_interviewer if i["id"] not in marks],
            "score": t_score + i_score, "max_score": t_max + i_max}


def _cell(text: Any) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def mark_by(m: dict[str, Any]) -> str:
    return f"{m['by']}" + (f", {m['where']}" if m.get("where") else "")


def render_markdown(data: dict[str, Any], candidate: bool = False) -> str:
    """The report. ``candidate``: the copy for the candidate: no hidden test's name or
    message, no interviewer's note or marks' history."""
    tot = totals(data)
    marks = data.get("marks", {})
    settings = data.get("settings", {})
    graded = data.get("grade")
    gset = graded.get("settings", {}) if graded else {}
    interviewers = data.get("interviewers") or []
    md: list[str] = [
        f"# Interview report: {data.get('candidate', 'candidate')}, {data['title']} "
        f"({data['kata']})" + (" (the candidate's copy)" if candidate else ""), "",
        f"- candidate: {data.get('candidate', 'candidate')}"]
    if not candidate:
        md.append(f"- interviewer: {', '.join(interviewers) or 'none recorded'}")
    md += [
        f"- started: {data['started']}",
        f"- time allowed: {minutes_text(data['minutes_allowed'])}; time used: "
        f"{clock(data['time_used_s'])}"
        + (f" (the final grading's {seconds_text(data['grading_s'])} not counted)"
           if graded is not None and data.get("grading_s") else ""),
        f"- ended by: {data['ended']}",
        f"- hints: {'allowed' if data['hints_allowed'] else 'off'}; taken: "
        f"{len(data['hints_taken'])}",
        f"- watch runs of the public tests: {len(data['runs'])}",
        f"- settings: hypothesis profile {gset.get('profile', settings.get('profile', '?'))}"
        f", seed {gset.get('seed', 'derandomized')}, isolation "
        f"{gset.get('isolation', NOT_GRADED)}, implementation "
        f"{gset.get('implementation', settings.get('workspace', '?'))}, commit "
        f"{settings.get('commit', 'unknown')}"]
    if not candidate:
        md.append(f"- session folder: {data.get('folder', '?')}")
    md.append("")
    interviewer = (f"interviewer {points_text(tot['interviewer_score'])}/"
                   f"{tot['interviewer_max']}"
                   + (f", not marked yet: {', '.join(tot['unmarked'])}" if tot["unmarked"]
                      else ""))
    if tot["tests_graded"]:
        tests = f"tests {tot['tests_score']}/{tot['tests_max']}"
        uncounted = graded.get("not_counted", 0) if graded else 0
        if uncounted:
            tests += f", {uncounted} points not counted"
        if tot["interviewer_max"]:
            md.append(f"## Score: {points_text(tot['score'])}/{tot['max_score']} "
                      f"({tests} + {interviewer})")
        else:
            md.append(f"## Score: {tot['score']}/{tot['max_score']} ({tests}: public + "
                      "hidden)")
    else:
        why = ("public tests only: a candidate bundle holds no hidden tests"
               if graded is not None else f"the session ended by: {data['ended']}")
        md.append(f"## Score: not graded by the tests ({why}; "
                  f"nox -s interview -- grade {data.get('folder', 'DIR')} grades it)"
                  + (f"; {interviewer}" if tot["interviewer_max"] else ""))
    md += ["", "| rubric item | graded by | points | status | tests passed "
           "| first passed (public tests) | interviewer's note |",
           "|---|---|---|---|---|---|---|"]
    items = {r["id"]: r for r in graded["items"]} if graded else {}
    for item in data["rubric"]:
        if item["graded_by"] == "tests":
            r = items.get(item["id"])
            first = data["first_pass"].get(item["id"])
            score = f"{r['score']}/{item['points']}" if r else f"-/{item['points']}"
            if r and r["status"] == "skipped":   # not counted is not zero
                score = f"-/{item['points']}"
            counts = (f"{r['passed']}/{r['tests']} (public {r['public']['passed']}/"
                      f"{r['public']['tests']}, hidden {r['hidden']['passed']}/"
                      f"{r['hidden']['tests']})") if r else "-"
            status = (r["status"] + (f" ({r['note']})" if r.get("note") else "")).replace(
                "|", "/") if r else NOT_GRADED
            md.append(f"| {item['id']} | tests | {score} | {status}"
                      f" | {counts} | {clock(first) if first is not None else '-'} | |")
        else:
            m = marks.get(item["id"])
            score = f"{points_text(m['points'])}/{item['points']}" if m else \
                f"-/{item['points']}"
            status = (f"marked by {mark_by(m)}" if not candidate else "marked") if m else \
                "not marked yet"
            note = "" if candidate or not m else _cell(m["note"])
            md.append(f"| {item['id']} | interviewer | {score} | {status} | - | - | {note} |")
    failed = [r for r in (graded["items"] if graded else []) if r["status"] == "failed"]
    if failed:
        md += ["", "## First failures", ""]
        for r in failed:
            pub, hid = r["public"]["first_failure"], r["hidden"]["first_failure"]
            if pub:
                md.append(f"- {r['id']}, public: {pub}")
            if hid:
                md.append(f"- {r['id']}, hidden: " + (
                    "failed by hidden tests (their detail is not shown)" if candidate else hid))
    md += ["", "## Hints taken", ""]
    md += [f"- {clock(h['at'])}: {h['hint']}" for h in data["hints_taken"]] or ["- none"]
    if not candidate:
        md += ["", "## Interviewer-graded items (checklist)", ""]
        by_interviewer = [i for i in data["rubric"] if i["graded_by"] != "tests"]
        for i in by_interviewer:
            m = marks.get(i["id"])
            if m:
                md.append(f"- [x] {i['id']} ({points_text(m['points'])}/{i['points']} points, "
                          f"{mark_by(m)}, {m['when']}): {i['description']}"
                          + (f" Note: {m['note']}" if m["note"] else ""))
            else:
                md.append(f"- [ ] {i['id']} ({i['points']} points): {i['description']}")
        if not by_interviewer:
            md.append("- none for this kata")
        history = data.get("marks_history", [])
        md += ["", "## Marks, in the order given", ""]
        for n, m in enumerate(history):
            later = any(x["item"] == m["item"] for x in history[n + 1:])
            md.append(f"- {m['when']} {m['item']} {points_text(m['points'])}/{m['max']} by "
                      f"{mark_by(m)}" + (f": {m['note']}" if m["note"] else "")
                      + (" (replaced by a later mark)" if later else " (counts)"))
        if not history:
            md.append("- none")
    md += ["", "## Timeline of watch runs", ""]
    md += [f"- {clock(r['at'])} {r['why']}: "
           + (f"does not load: {r['load_error']}" if r.get("load_error") else
              ", ".join(f"{k} {v}" for k, v in r["status"].items()) or "no tests")
           for r in data["runs"]] or ["- none"]
    md += ["", "## Final code (diff against the stub)", "", "```diff", data["diff"].rstrip("\n"),
           "```", ""]
    return "\n".join(md)


def render_all(data: dict[str, Any]) -> dict[str, str]:
    """The hiring team's report.md, .html, .json and the candidate's copy (.md, .html)."""
    data = dict(data, totals=totals(data))
    full = render_markdown(data)
    mine = render_markdown(data, candidate=True)
    title = f"{data.get('candidate', 'candidate')}: {data['title']}"
    return {"report.md": full, "report.html": markdown_to_html(full, title),
            "report.json": json.dumps(data, indent=2) + "\n",
            "candidate-report.md": mine, "candidate-report.html": markdown_to_html(mine, title)}


def write_report(folder: Path, ended: str, time_used: float, graded: dict[str, Any] | None,
                 grading_s: float = 0.0) -> Path:
    """Write every report file of a session's folder, with the marks given so far."""
    with locked(folder):
        data = report_data(folder, ended, time_used, graded, grading_s)
        for name, text in render_all(data).items():
            write_atomic(folder / name, text)
    return folder


HTML_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
              "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .6em}"
              "pre{background:#f6f8fa;padding:1em;overflow:auto}"
              ".add{background:#e6ffec;color:#116329}.del{background:#ffebe9;color:#82071e}"
              ".hunk{color:#0550ae;background:#ddf4ff}.file{color:#57606a;font-weight:bold}")


def _diff_line(line: str) -> str:
    """One line of a unified diff, classed for colour: added, removed, hunk, file."""
    kind = ("file" if line.startswith(("+++", "---")) else "add" if line.startswith("+")
            else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else "")
    body = html.escape(line)
    return f"<span class='{kind}'>{body}</span>" if kind else f"<span>{body}</span>"


def markdown_to_html(text: str, title: str) -> str:
    """A small Markdown subset to HTML: headings, lists, tables, code blocks (a ```diff
    block coloured line by line; its lines stay apart without the stylesheet, pasted into
    an email or a tracking system)."""
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
           f"</title><style>{HTML_STYLE}</style></head><body>"]
    code: str | None = None         # the open code block's language ("" for none)
    block: list[str] = []
    in_list = in_table = False

    def close_code() -> None:
        if code == "diff":   # inline spans, one per line, newlines between them
            out.append("<pre class='diff'>" + "\n".join(_diff_line(x) for x in block)
                       + "</pre>")
        else:
            out.append("<pre>" + "\n".join(html.escape(x) for x in block) + "</pre>")
        block.clear()

    for line in text.splitlines():
        if line.startswith("```"):
            if code is None:
                code = line[3:].strip()
            else:
                close_code()
                code = None
            continue
        if code is not None:
            block.append(line)
            continue
        if in_list and not line.startswith("- "):
            out.append("</ul>")
            in_list = False
        if in_table and not line.startswith("|"):
            out.append("</table>")
            in_table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("- "):
            if not in_list:
                out.append("<ul>")
                in_list = True
            item = line[2:]
            if item.startswith("[ ] "):
                item = "<input type='checkbox' disabled> " + html.escape(item[4:])
            elif item.startswith("[x] "):
                item = "<input type='checkbox' checked disabled> " + html.escape(item[4:])
            else:
                item = html.escape(item)
            out.append(f"<li>{item}</li>")
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if all(set(c) <= {"-"} for c in cells):
                continue
            tag = "th" if not in_table else "td"
            if not in_table:
                out.append("<table>")
                in_table = True
            out.append("<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells)
                       + "</tr>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if code is not None:
        close_code()
    if in_list:
        out.append("</ul>")
    if in_table:
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)


def total_line(folder: Path) -> str:
    """The report's combined total, in one line."""
    try:
        tot = totals(read_json(folder / "report.json"))
    except (OSError, ValueError, KeyError) as exc:
        return f"(the report's total cannot be read: {exc})"
    return (f"total: {points_text(tot['score'])}/{tot['max_score']} (tests "
            f"{tot['tests_score']}/{tot['tests_max']}"
            + ("" if tot["tests_graded"] else f", {NOT_GRADED}")
            + f" + interviewer {points_text(tot['interviewer_score'])}/{tot['interviewer_max']}"
            + (f"; not marked yet: {', '.join(tot['unmarked'])}" if tot["unmarked"] else "")
            + ")")


SUMMARY_COLUMNS = ("candidate", "kata", "date", "tests", "marks", "total", "hints",
                   "time used", "ended", "folder")


def summary_rows(root: Path) -> list[dict[str, str]]:
    """One row per session under ``root`` (its own folders, or ``root`` itself)."""
    folders = [root] if (root / SESSION_FILE).is_file() else \
        sorted(p for p in root.iterdir() if (p / SESSION_FILE).is_file())
    rows = []
    for folder in folders:
        try:
            info = session_info(folder)
            data = read_json(folder / "report.json") if (folder / "report.json").is_file() \
                else None
        except (MarkError, OSError, ValueError) as exc:
            rows.append({"candidate": "?", "kata": "?", "date": "", "tests": "",
                         "marks": "", "total": "", "hints": "", "time used": "",
                         "ended": f"unreadable: {exc}", "folder": str(folder)})
            continue
        if data is None:
            data = report_data(folder, "running" if is_running(folder, info)
                               else "no report (the process is gone)", 0.0, None, 0.0)
            used = max((float(e.get("at", 0)) for e in read_events(folder)), default=0.0)
            data["time_used_s"] = min(used, float(info.get("minutes", 0)) * 60)
        tot = totals(data)
        rows.append({
            "candidate": data.get("candidate", "candidate"), "kata": data["kata"],
            "date": data["started"],
            "tests": (f"{tot['tests_score']}/{tot['tests_max']}" if tot["tests_graded"]
                      else f"{NOT_GRADED}/{tot['tests_max']}"),
            "marks": (f"{points_text(tot['interviewer_score'])}/{tot['interviewer_max']}"
                      + (f" ({len(tot['unmarked'])} unmarked)" if tot["unmarked"] else "")
                      if tot["interviewer_max"] else "-"),
            "total": f"{points_text(tot['score'])}/{tot['max_score']}",
            "hints": str(len(data["hints_taken"])),
            "time used": f"{clock(data['time_used_s'])} of {minutes_text(data['minutes_allowed'])}",
            "ended": data["ended"], "folder": folder.name})
    return rows


def csv_safe(value: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
