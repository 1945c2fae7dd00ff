# tests/approval.cmake - escalations: session ids, device tokens, and the
# state replicas share - sessions, failed logins, Slack places, the vote
# lock - on both stores (cmocka), and the approver API end to end against `intentgate serve
# --dev` (votes, quorum, re-evaluation, deny, self-approval, groups, hash
# binding, expiry, login limits, audit events).
ig_test(approval session LIBS igapproval)
# Device tokens (issue 12).
ig_test(approval limiter LIBS igapproval)
# Sessions, failed sign-ins (backoff per key), Slack message places and
# the vote lock, kept by the store for every replica (issue 17): the same
# cases on SQLite and on PostgreSQL (IG_TEST_PG_URL; fails without it).
ig_test(store store_shared LIBS igstore SOURCES unit/shared_cases.c)
set_tests_properties(store.store_shared PROPERTIES LABELS unit TIMEOUT 300)
ig_test(store store_pg_shared LIBS igstore
  SOURCES unit/shared_cases.c unit/pg_test.c)
set_tests_properties(store.store_pg_shared PROPERTIES LABELS "unit;pg"
  TIMEOUT 300)

find_program(PYTHON3 python3 REQUIRED)
ig_store_test(approval.integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_approvals.py)
set_tests_properties(approval.integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 900)

# Two replicas on one PostgreSQL database (IG_TEST_PG_URL; fails without
# it): a session made on one is good on the other, failed logins on both
# add up, two votes at once on a quorum-2 request resolve it once.
add_test(NAME approval.shared_state
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_shared_state.py)
set_tests_properties(approval.shared_state PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  LABELS pg TIMEOUT 600)
