# tests/pg_read.cmake - the PostgreSQL store's audit reads and moving a
# SQLite store into PostgreSQL (included from tests/CMakeLists.txt). Both
# need the server at IG_TEST_PG_URL (scripts/pg-cluster.sh; scripts/test.sh
# starts one) and fail without it:
#   store.store_pg_read  every audit read answers as SQLite's on the same
#                        log (copied with store copy); settling; a short
#                        tile refused
#   audit.store_copy     `store copy` from a dev PDP's SQLite store, then
#                        `audit verify|export|show|proof --db URL`,
#                        refusals, tampering, a PDP serving the copy
if(NOT IG_FUZZ)
  ig_test(store store_pg_read LIBS igstore SOURCES unit/pg_test.c)
  set_tests_properties(store.store_pg_read PROPERTIES
    LABELS pg ENVIRONMENT "IG_TEST_STORE=postgresql" TIMEOUT 300)

  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME audit.store_copy
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_store_copy.py)
  set_tests_properties(audit.store_copy PROPERTIES
    LABELS pg
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;IG_TEST_STORE=postgresql"
    TIMEOUT 900)
endif()
