# tests/agent.cmake - the agent's side against real servers on loopback:
# `intentgate submit` (a dev PDP, the dev executor, a fake upstream, an
# approver voting through the API, a fake PDP answering malformed things)
# and the integration examples in docs/examples/ (bash + curl, Python,
# Node.js), each driven through ALLOW, BLOCK and an approved ESCALATE.
find_program(PYTHON3 python3 REQUIRED)
ig_store_test(agent.submit
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_submit.py)
set_tests_properties(agent.submit PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>"
  TIMEOUT 300)

find_program(IG_CURL_PROGRAM curl)
find_program(IG_NODE_PROGRAM node)
ig_store_test(agent.examples
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_examples.py
  ${CMAKE_SOURCE_DIR}/docs/examples)
set_tests_properties(agent.examples PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>;INTENTGATE_EXECUTOR_BIN=$<TARGET_FILE:intentgate-executor>;IG_CURL=${IG_CURL_PROGRAM};IG_NODE=${IG_NODE_PROGRAM}"
  TIMEOUT 300)
