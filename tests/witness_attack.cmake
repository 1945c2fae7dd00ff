# tests/witness_attack.cmake - the witnesses played against (included from
# tests/CMakeLists.txt):
#   audit.audit_cosig_attack  cmocka, audit/audit_cosig.h: cosignatures
#                    moved between checkpoints, key confusion between the
#                    log's type 0x01 and the witness's 0x04, every byte of a
#                    cosignature flipped, hostile request bodies and answers
#   witness.attack   tests/integration/test_witness_attack.py, the real
#                    binaries: a network attacker against `intentgate
#                    witness serve`, a hostile witness against the PDP, an
#                    operator's fork against `audit verify --witness`
if(NOT IG_FUZZ)
  ig_test(audit audit_cosig_attack LIBS igaudit SOURCES unit/audit_util.c)

  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME witness.attack
    COMMAND ${PYTHON3}
            ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_witness_attack.py)
  set_tests_properties(witness.attack PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    LABELS witness TIMEOUT 900)
endif()
