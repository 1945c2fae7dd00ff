# PDP tests: store and config unit tests (cmocka), and the integration
# suite that starts the real `intentgate serve` on loopback and drives it
# over HTTP (Python standard library only).
ig_test(pdp store LIBS igpdp)
# The PostgreSQL store (issue 17) against the cluster scripts/test.sh
# starts (IG_TEST_PG_URL; without it these fail): its schema and
# migrations.
ig_test(pdp store_pg_schema LIBS igstore SOURCES unit/pg_test.c)
set_tests_properties(pdp.store_pg_schema PROPERTIES LABELS "unit;pg"
  TIMEOUT 120)
ig_test(pdp config LIBS igpdp)
# Refused requests counted and written in aggregate; client addresses
# behind trusted proxies (issue 12).
ig_test(pdp refusals LIBS igpdp)
ig_test(pdp addr LIBS igpdp)
# The long-poll registry: no waiter parks once the stop has run.
ig_test(pdp wait LIBS igpdp)
# The shadow bundle's comparison, counts, label cap and escaping.
ig_test(pdp shadow LIBS igpdp)

find_program(PYTHON3 python3 REQUIRED)
ig_store_test(pdp.integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_pdp.py)
set_tests_properties(pdp.integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 900)

# The redeem takes only the token the PDP issued (compared with the
# stored one instead of a second signature check): forgeries, another
# intent's or executor's token, expiry, a retired key.
ig_store_test(pdp.redeem_integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_redeem.py)
set_tests_properties(pdp.redeem_integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 300)

# What one client, or all of them, may hold: connections, the request
# deadline, parked polls, the write queue, a stop under load (50 times).
ig_store_test(pdp.limits
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_pdp_limits.py)
set_tests_properties(pdp.limits PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 900)

# Refusals cannot write the audit log; failed logins cannot lock
# approvers out; X-Forwarded-For only from trusted proxies.
ig_store_test(pdp.refusals_integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_refusals.py)
set_tests_properties(pdp.refusals_integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 900)

# The PostgreSQL store's writes and reads (store_pg_write.c,
# store_pg_read.c, store_pg_vote.c) on a database of their own per case,
# created on the cluster IG_TEST_PG_URL names (they fail without it); the
# races of replicas sharing one database, and the two backends' JSON
# compared.
ig_test(pdp store_pg LIBS igpdp SOURCES unit/test_store_pg_util.c)
set_tests_properties(pdp.store_pg PROPERTIES LABELS pg TIMEOUT 300)
ig_test(pdp store_pg_race LIBS igpdp SOURCES unit/test_store_pg_util.c)
set_tests_properties(pdp.store_pg_race PROPERTIES LABELS pg TIMEOUT 300)
ig_test(pdp store_pg_conn LIBS igpdp SOURCES unit/test_store_pg_util.c)
set_tests_properties(pdp.store_pg_conn PROPERTIES LABELS pg TIMEOUT 300)

# Several `intentgate serve` replicas on one PostgreSQL database (issue
# 17): the redeem race spread over two and three replicas (and over two,
# one killed as it starts), grants and long-poll wake-ups across them, a
# replica killed under load (nothing acknowledged lost, the log verifies,
# the sequencer moves), the database restarted under load (fail closed,
# then recover; on a cluster of the test's own, scripts/pg-cluster.sh),
# `store copy` from SQLite, scripts/pg-cluster.sh itself, and `serve
# --database`.
add_test(NAME pdp.replicas
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_replicas.py)
set_tests_properties(pdp.replicas PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;IG_TEST_STORE=postgresql"
  LABELS pg TIMEOUT 900)


# Attacks on the PostgreSQL store and its replicas (issue 17), on fresh
# databases of the cluster IG_TEST_PG_URL names (they fail without it):
# a URL's password kept out of logs and errors, redeems, idempotency keys
# and votes raced over two replicas while pg_terminate_backend cuts their
# connections, a database restarted under load (a cluster of the test's
# own), idle connections the server ended, a table locked past the
# statement timeout, forged NOTIFY payloads, the sequencer killed, `audit
# verify --db` on an edited or cut log, `store copy` into a served
# database. pdp.pg_attack_open runs the attacks that still succeed (the
# PDP's role can drop or forge audit events before they are sequenced; a
# session lookup the store cannot answer is 401, not 503): it passes
# while each of them still succeeds, and fails once one is caught or
# cannot run.
add_test(NAME pdp.pg_attack
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_pg_attack.py)
set_tests_properties(pdp.pg_attack PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  LABELS "integration;pg" TIMEOUT 600)
add_test(NAME pdp.pg_attack_open
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_pg_attack.py
  --open)
set_tests_properties(pdp.pg_attack_open PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  LABELS "integration;pg" TIMEOUT 600)

# The explain trace end to end: recorded in intent.decided (at intake and
# at quorum), never in the agent's answer, shown by `audit show`, the
# approval page and the audit pages, escaped.
ig_store_test(pdp.trace_integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_trace.py)
set_tests_properties(pdp.trace_integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  LABELS integration TIMEOUT 300)

# A shadow bundle next to the live one: disagreements in /metrics, audit
# events and GET /v1/policy/shadow; live decisions and quotas untouched by
# it, hostile or not; its own reload at SIGHUP; config refusals.
ig_store_test(pdp.shadow_integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_shadow.py)
set_tests_properties(pdp.shadow_integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  LABELS integration TIMEOUT 300)
