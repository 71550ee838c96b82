# expect_exit.cmake: runs `CMD --lib LIB WL` and checks its exit status (EXPECT_RC) and,
# when EXPECT_ERR is given, that stderr contains that text.
execute_process(COMMAND ${CMD} --lib ${LIB} ${WL}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}; stderr: ${err}")
endif()
if(DEFINED EXPECT_ERR)
  string(FIND "${err}" "${EXPECT_ERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${EXPECT_ERR}': ${err}")
  endif()
endif()
