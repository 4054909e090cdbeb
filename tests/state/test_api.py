"""The state store's API, the same test functions on SQLite and PostgreSQL (`state` fixture)."""

from __future__ import annotations

import pytest

from memdir.errors import InvalidInput, NotFound
from memdir.state import ItemStatus, State


def test_a_task_is_created_read_updated_and_closed(state: State) -> None:
    goal = state.add_goal("ship v1", priority=1)
    task = state.add_task("write docs", goal_id=goal.id, priority=2, fields={"area": "docs"})
    assert task.id.startswith("t-") and goal.id.startswith("g-")
    assert state.get_task(task.id) == task
    assert (task.status, task.goal_id, task.fields, task.closed_at) == (
        ItemStatus.OPEN,
        goal.id,
        {"area": "docs"},
        None,
    )
    changed = state.update_task(
        task.id, status="active", notes="half done", fields={"area": "", "owner": "me"}
    )
    assert changed.status is ItemStatus.ACTIVE
    assert changed.notes == "half done" and changed.fields == {"owner": "me"}
    assert changed.updated_at > task.updated_at and changed.created_at == task.created_at
    closed = state.close_task(task.id)
    assert closed.status is ItemStatus.DONE and closed.closed_at is not None
    assert state.close_task(task.id, status="dropped").closed_at == closed.closed_at


def test_lists_filter_and_order(state: State) -> None:
    goal = state.add_goal("g")
    low = state.add_task("low", priority=0)
    high = state.add_task("high", priority=5, goal_id=goal.id)
    blocked = state.add_task("blocked", status="blocked")
    done = state.add_task("done")
    state.close_task(done.id)
    assert [t.id for t in state.list_tasks()] == [high.id, low.id, blocked.id]
    assert [t.id for t in state.list_tasks(include_closed=True)][-1] == done.id
    assert [t.id for t in state.list_tasks(status="blocked")] == [blocked.id]
    assert [t.id for t in state.list_tasks(status="done")] == [done.id]
    assert [t.id for t in state.list_tasks(goal_id=goal.id)] == [high.id]
    assert len(state.list_tasks(limit=2)) == 2
    assert [g.id for g in state.list_goals()] == [goal.id]


def test_goals_have_the_same_shape(state: State) -> None:
    goal = state.add_goal("learn", notes="why", fields={"horizon": "q3"})
    assert state.update_goal(goal.id, title="learn more").title == "learn more"
    assert state.close_goal(goal.id).status is ItemStatus.DONE
    assert state.list_goals() == []
    assert [g.id for g in state.list_goals(include_closed=True)] == [goal.id]


def test_missing_and_invalid_things_are_clear_errors(state: State) -> None:
    with pytest.raises(NotFound, match="no task 't-nope'"):
        state.get_task("t-nope")
    with pytest.raises(NotFound):
        state.update_goal("g-nope", title="x")
    with pytest.raises(NotFound):
        state.close_task("t-nope")
    with pytest.raises(NotFound, match="no goal"):
        state.add_task("under a missing goal", goal_id="g-nope")
    with pytest.raises(InvalidInput, match="unknown status"):
        state.add_task("x", status="finished")
    with pytest.raises(InvalidInput, match="cannot be empty"):
        state.add_task("  ")
    with pytest.raises(InvalidInput, match="done or dropped"):
        state.close_task(state.add_task("x").id, status="open")
    assert state.list_tasks() == [state.list_tasks()[0]]  # only the one valid task


def test_sessions_are_recorded_and_listed(state: State) -> None:
    first = state.record_session("agent-a", "planned", started_at=1000, ended_at=2000)
    second = state.record_session("agent-b", "built", started_at=3000)
    assert [s.id for s in state.list_sessions()] == [second.id, first.id]
    assert state.list_sessions(agent="agent-a") == [first]
    with pytest.raises(InvalidInput, match="end before"):
        state.record_session("agent-a", started_at=5, ended_at=1)


def test_meta_is_set_replaced_and_read(state: State) -> None:
    state.set_meta("model", "small")
    state.set_meta("model", "large")
    state.set_meta("locale", "de")
    assert state.get_meta("model").value == "large"
    assert [m.key for m in state.list_meta()] == ["locale", "model"]
    with pytest.raises(NotFound):
        state.get_meta("absent")


def test_every_write_appends_one_audit_entry_without_values(state: State) -> None:
    goal = state.add_goal("distinctive-goal-title")
    task = state.add_task("distinctive-task-title", fields={"area": "distinctive-value"})
    state.update_task(task.id, notes="distinctive-notes")
    state.close_task(task.id)
    session = state.record_session("agent-a", "distinctive-summary")
    state.set_meta("model", "distinctive-meta-value")
    entries = state.audit()
    assert [(e.action, e.object_id) for e in reversed(entries)] == [
        ("goal.add", goal.id),
        ("task.add", task.id),
        ("task.update", task.id),
        ("task.close", task.id),
        ("session.record", session.id),
        ("meta.set", "model"),
    ]
    assert [e.seq for e in reversed(entries)] == [1, 2, 3, 4, 5, 6]
    assert {e.actor for e in entries} == {"agent-a"}
    assert "distinctive" not in repr(entries)
    assert [e.action for e in state.audit(object_id=task.id, limit=2)] == [
        "task.close",
        "task.update",
    ]


def test_a_refused_or_failed_write_leaves_no_audit_entry(state: State) -> None:
    with pytest.raises(NotFound):
        state.update_task("t-nope", title="x")
    with pytest.raises(InvalidInput):
        state.add_task("x", status="nonsense")
    assert state.audit() == []


def test_reopening_keeps_everything(state: State, request: pytest.FixtureRequest) -> None:
    task = state.add_task("kept")
    if state.backend == "sqlite":
        assert state.path is not None
        again = State.open(state.path)
    else:
        again = State.open_postgres(request.getfixturevalue("pg_database_dsn"))
    with again:
        assert again.get_task(task.id) == task
        assert again.counts()["audit"] == 1
