# tests/audit.cmake - the audit library (audit/): unit tests, the Node.js
# interop check, libFuzzer targets and the benchmark. Included with and
# without IG_FUZZ; each part guards itself.
if(NOT IG_FUZZ)
  # The in-memory audit tree the tests and the interop sample build their
  # logs with (test code: no product links it).
  add_library(igauditmem STATIC support/audit_mem.c)
  target_include_directories(igauditmem PUBLIC support)
  target_link_libraries(igauditmem PUBLIC igaudit)

  ig_test(audit audit_tree LIBS igauditmem)
  ig_test(audit audit_tile LIBS igaudit)
  ig_test(audit audit_note LIBS igaudit SOURCES unit/audit_util.c)
  ig_test(audit audit_cosig LIBS igaudit SOURCES unit/audit_util.c)
  ig_test(audit audit_proof LIBS igauditmem SOURCES unit/audit_util.c)
  ig_test(audit audit_verify LIBS igauditmem SOURCES unit/audit_util.c)
  ig_test(audit audit_redact LIBS igaudit SOURCES unit/audit_util.c)
  ig_test(audit audit_leaf LIBS igaudit)

  # A signed sample log, checked by an independent Node.js verifier.
  # Always registered: without node the test fails naming it.
  add_executable(audit_sample interop/audit_sample.c)
  target_link_libraries(audit_sample PRIVATE igauditmem)
  find_program(IG_NODE node)
  if(NOT IG_NODE)
    set(IG_NODE node)
  endif()
  add_test(NAME audit.interop
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interop/interop.sh
            $<TARGET_FILE:audit_sample> ${IG_NODE}
            ${CMAKE_CURRENT_SOURCE_DIR}/interop/verify_checkpoint.mjs)
endif()

if(IG_FUZZ)
  # Signed notes, checkpoints and verifier keys; tlog-proofs and proofs;
  # the time of a leaf. Seeds: tests/fuzz/corpus/note/ and proof/
  # (audit_sample --fuzz), leaf/ (events as the PDP writes them); a
  # witness's requests, answers and keys: witness/ (fuzz_witness.c).
  foreach(target note proof leaf witness)
    add_executable(fuzz_${target} fuzz/fuzz_${target}.c)
    target_link_libraries(fuzz_${target} PRIVATE igaudit)
    target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer)
  endforeach()
endif()

if(IG_BENCH AND NOT IG_FUZZ)
  add_executable(bench_audit bench/bench_audit.c)
  target_link_libraries(bench_audit PRIVATE igaudit)
  # Cosignatures per second from a running `intentgate witness`
  # (tests/bench/bench_witness.sh starts one).
  add_executable(bench_witness bench/bench_witness.c)
  target_link_libraries(bench_witness PRIVATE igauditmem PkgConfig::CURL
    Threads::Threads)
endif()
