"""Issue 59, items 11 and 12, in the database: who sent a program, who enqueued a job, admin keys.

A program sent with a key is private to every key that sends it; one stored without a key (the seed's,
the CLI's) stays public whoever sends it later; a deleted key leaves its programs private and its jobs
without an owner. Both backends.
"""

from __future__ import annotations

from database import (
    Store,
    create_api_key,
    delete_api_key,
    enqueue_job,
    find_api_key,
    get_job,
    get_or_create_nest,
    get_or_create_program,
    get_program,
    program_owned_by,
)


def test_a_program_sent_with_a_key_belongs_to_every_key_that_sends_it(store: Store) -> None:
    with store.session() as session:
        a, _ = create_api_key(session, name="a")
        b, _ = create_api_key(session, name="b")
        seed = get_or_create_program(session, source="int seed;", name="seed.c")
        sent_again = get_or_create_program(session, source="int seed;", name="x.c", owner_key_id=a.id)
        assert not seed.private and not sent_again.private  # public it was, public it stays
        assert not program_owned_by(session, program_id=seed.id, api_key_id=a.id)
        mine = get_or_create_program(session, source="int mine;", name="mine.c", owner_key_id=a.id)
        assert mine.private and program_owned_by(session, program_id=mine.id, api_key_id=a.id)
        assert not program_owned_by(session, program_id=mine.id, api_key_id=b.id)
        for _ in range(2):  # idempotent
            assert get_or_create_program(session, source="int mine;", name="b.c", owner_key_id=b.id).id == mine.id
        assert program_owned_by(session, program_id=mine.id, api_key_id=b.id)
    with store.session() as session:
        delete_api_key(session, name="a")
    with store.session() as session:
        assert get_program(session, program_id=mine.id).private
        assert not program_owned_by(session, program_id=mine.id, api_key_id=a.id)


def test_a_job_remembers_its_key_and_an_admin_key_says_so(store: Store) -> None:
    with store.session() as session:
        admin, secret = create_api_key(session, name="root", admin=True)
        plain, _ = create_api_key(session, name="plain")
        program = get_or_create_program(session, source="int j;", name="j.c")
        nest = get_or_create_nest(session, program_id=program.id, index=0, normalized={})
        job = enqueue_job(session, nest_id=nest.id, budget=1, owner_key_id=plain.id)
        found = find_api_key(session, key=secret)
        assert admin.admin and found is not None and found.admin and not plain.admin
        assert job.owner_key_id == plain.id
    with store.session() as session:
        delete_api_key(session, name="plain")
    with store.session() as session:
        assert get_job(session, job_id=job.id).owner_key_id is None
