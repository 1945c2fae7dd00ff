# Witness cosignatures in the store (issue 18): the same cases on both
# backends (unit/test_store_cosig_cases.c) - put, get, latest, hostile
# lines, on_checkpoint, the offline reader's notes with their lines - and
# each backend's own: SQLite's triggers, migration 7 and a schema-6 file
# read offline; PostgreSQL's triggers, migration 2, the least-privilege
# role and `store copy` of cosignatures. The PostgreSQL cases need
# IG_TEST_PG_URL (they fail without it, never skip).
if(NOT IG_FUZZ)
  ig_test(store store_cosig LIBS igstore
    SOURCES unit/test_store_cosig_cases.c)
  set_tests_properties(store.store_cosig PROPERTIES LABELS unit TIMEOUT 300)
  ig_test(store store_pg_cosig LIBS igstore
    SOURCES unit/test_store_cosig_cases.c unit/pg_test.c)
  set_tests_properties(store.store_pg_cosig PROPERTIES LABELS "unit;pg"
    TIMEOUT 300)
endif()
