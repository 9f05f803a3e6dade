"""The dashboard's run history: a page of runs, one run with its events, and the export as CSV or JSON.

The list and the export take the same filters (outcome, puzzle size), checked by FastAPI: a bad value is a
422 naming the parameter and what it may be.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from fastapi import Path as PathParam
from fastapi.responses import StreamingResponse
from pydantic import BeforeValidator

from .history import OUTCOMES
from .history_export import export_name, runs_csv, runs_json
from .schema import Puzzle
from .web_models import INVALID, SQLITE_INT_MAX, RunsPage, refusals

Outcome = Literal[OUTCOMES]  # type: ignore[valid-type]
# a query string's "3" is a str: read digits as the number, so that the error for anything else says "2 or 3"
PuzzleSize = Annotated[Puzzle, BeforeValidator(lambda v: int(v) if isinstance(v, str) and v.isdigit() else v)]
OUTCOME_QUERY = Query(None, description="only the runs that ended so (running: the one under way)")
PUZZLE_QUERY = Query(None, description="only the runs of this cube: 2 (2x2x2) or 3 (3x3x3)")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


def history_routes(daemon: Any) -> APIRouter:
    router = APIRouter()

    @router.get("/api/runs", responses=refusals({422: INVALID}))
    def runs(
        limit: int = Query(20, ge=1, le=500),
        offset: int = Query(0, ge=0, le=SQLITE_INT_MAX),
        outcome: Outcome | None = OUTCOME_QUERY,
        puzzle: PuzzleSize | None = PUZZLE_QUERY,
    ) -> RunsPage:
        """Newest first; each run with ``moves_done`` of ``moves_total`` (what a stopped or failed run turned)
        and ``duration_s``."""
        found = daemon.history.list_runs(limit, offset, outcome, puzzle)
        return RunsPage(runs=found, limit=limit, offset=offset)

    @router.get(
        "/api/runs/export",
        response_class=StreamingResponse,
        responses={
            200: {
                "content": {"text/csv": {}, "application/json": {}},
                "description": "every run the filters pass, newest first, as a file to save",
            },
            **refusals({422: INVALID}),
        },
    )
    def export(
        format: Literal["csv", "json"] = Query(description="csv: one row a run; json: the runs as /api/runs has them"),
        outcome: Outcome | None = OUTCOME_QUERY,
        puzzle: PuzzleSize | None = PUZZLE_QUERY,
    ) -> StreamingResponse:
        filters = {"outcome": outcome, "puzzle": puzzle}
        found = daemon.history.export_runs(outcome, puzzle)
        body = runs_csv(found) if format == "csv" else runs_json(found, filters)
        name = export_name(format, filters)
        return StreamingResponse(
            body,
            media_type=MEDIA_TYPES[format],
            headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
        )

    @router.get("/api/runs/{run_id}", responses=refusals({404: "no run with this id", 422: INVALID}))
    def run(run_id: int = PathParam(ge=1, le=SQLITE_INT_MAX)) -> dict:
        found = daemon.history.get_run(run_id)
        if found is None:
            raise HTTPException(404, f"no run with id {run_id}")
        return found

    return router
