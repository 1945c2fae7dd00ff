# Executor tests (cmocka): secrets and their CLI, the offline grant checks
# (every refusal code), the sealed registry, the http handler against an
# in-process upstream, the exec runner and its bwrap sandbox.
ig_test(executor secrets LIBS igexec SOURCES unit/secrets_util.c)
ig_test(executor verify LIBS igexec)
ig_test(executor registry LIBS igexec)
ig_test(executor http LIBS igexec PkgConfig::MHD)
ig_test(executor sandbox LIBS igexec)
ig_test(executor scrub LIBS igexec)
ig_test(executor spool LIBS igexec)
ig_test(executor exec_config LIBS igexec)
# The git gateway's wire parsers; the real captures are the fuzz seeds.
ig_test(executor git_pkt LIBS igexec)
target_compile_definitions(test_git_pkt PRIVATE
  IG_GIT_CORPUS="${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/git_pkt")
# The MCP gateway's JSON-RPC reader, writers and stdio line splitter; the
# fuzz seeds are real message shapes, each named by the kind it parses to.
ig_test(executor mcp_rpc LIBS igexec)
target_compile_definitions(test_mcp_rpc PRIVATE
  IG_MCP_CORPUS="${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/mcp_rpc")

# End to end: a dev PDP, the real executor, a fake upstream on loopback.
add_test(NAME executor.integration
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_executor.py)
set_tests_properties(executor.integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
  TIMEOUT 600)

# Issue 11's adversarial suites (a compromised agent against the executor):
# sandbox escape, credential reflection, URL exactness, outcome spooling,
# soak. They plant files in /srv, /run, /etc, /var, /home and /root and
# need root and a working bubblewrap; a missing prerequisite fails them.
foreach(suite sandbox_escape reflection exec_url outcome_spool exec_soak)
  add_test(NAME executor.${suite}
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_${suite}.py)
  set_tests_properties(executor.${suite} PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
    TIMEOUT 1200)
endforeach()

# Issue 16's MCP gateway: our own upstream fixture (mcp_fixture.py, stdio
# and Streamable HTTP, profiles conformance and hostile) tested by itself
# with raw JSON-RPC and with the SDK client driver tests/mcp/client.mjs,
# then under the MCP conformance suite directly (tests/mcp/conformance.sh,
# baseline tests/mcp/fixture-expected-failures.yml). Both need node and
# tests/mcp/node_modules (scripts/test.sh installs them); without them
# they fail.
add_test(NAME executor.mcp_fixture
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_mcp_fixture.py)
add_test(NAME executor.mcp_conformance_fixture
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mcp/conformance_fixture.sh
          ${CMAKE_BINARY_DIR})
add_test(NAME executor.mcp_gateway
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_mcp_gateway.py)
set_tests_properties(executor.mcp_gateway PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
  LABELS integration TIMEOUT 600)
add_test(NAME executor.mcp_attack
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_mcp_attack.py)
set_tests_properties(executor.mcp_attack PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
  LABELS integration TIMEOUT 600)
set_tests_properties(executor.mcp_fixture executor.mcp_conformance_fixture
  PROPERTIES TIMEOUT 300)
# The conformance suite through the gateway (tests/mcp/conformance_gateway.sh:
# PDP, the fixture registered with "names": "bare", the executor, a proxy
# adding the agent's token), baseline tests/mcp/gateway-expected-failures.yml
# (what the gateway refuses by design); and the stdio bridge
# (`intentgate mcp connect`) under the SDK client, end to end.
add_test(NAME executor.mcp_conformance_gateway
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mcp/conformance_gateway.sh
          ${CMAKE_BINARY_DIR})
add_test(NAME executor.mcp_bridge
  COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_mcp_bridge.py)
set_tests_properties(executor.mcp_conformance_gateway executor.mcp_bridge
  PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
  LABELS integration TIMEOUT 300)
