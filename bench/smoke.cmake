# smoke.cmake: the bench.smoke test. Runs devtrace-bench with tiny sizes and checks that
# it ran every benchmark and wrote the JSON (one object per figure with name, value,
# unit, target and pass). It never looks at timings: benchmarks are not tests.
#   cmake -DBENCH=path/to/devtrace-bench -DJSON=out.json -P smoke.cmake
cmake_policy(SET CMP0057 NEW) # if(... IN_LIST ...)
if(NOT BENCH OR NOT JSON)
  message(FATAL_ERROR "usage: cmake -DBENCH=devtrace-bench -DJSON=out.json -P smoke.cmake")
endif()
file(REMOVE ${JSON})
execute_process(COMMAND ${BENCH} --smoke --json ${JSON} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "devtrace-bench --smoke exited with ${rc}:\n${err}")
endif()
if(NOT EXISTS ${JSON})
  message(FATAL_ERROR "devtrace-bench --smoke wrote no ${JSON}")
endif()
file(READ ${JSON} json)
string(JSON figures GET "${json}" figures)
string(JSON n LENGTH "${json}" figures)
if(n LESS 10)
  message(FATAL_ERROR "only ${n} figures in ${JSON}")
endif()
math(EXPR last "${n} - 1")
set(names "")
foreach(i RANGE ${last})
  foreach(key name value unit target pass)
    string(JSON type ERROR_VARIABLE missing TYPE "${json}" figures ${i} ${key})
    if(missing)
      message(FATAL_ERROR "figure ${i} has no '${key}' in ${JSON}")
    endif()
  endforeach()
  string(JSON name GET "${json}" figures ${i} name)
  list(APPEND names ${name})
  if(name MATCHES "\\.completed$")
    string(JSON why GET "${json}" figures ${i} note)
    message(FATAL_ERROR "a benchmark did not complete: ${why}")
  endif()
endforeach()
# Every group reported its judged figures (measured or not, with its reason).
foreach(want decode.cupti.vs_memcpy decode.mcpti.vs_memcpy callback.opencl.1t.vs_clock_read
             callback.opencl.16t.vs_clock_read callback.opencl.launch callback.roctracer.1t.vs_clock_read
             callback.roctracer.16t.vs_clock_read format.vs_fwrite write.plain.vs_fwrite write.gzip.vs_zlib
             write.gzip.compression_ratio write.perfetto.vs_fwrite memory.vs_event_size drain.vs_memcpy
             e2e.pocl.cpu_overhead_vs_untraced report.reader.vs_read report.tables.vs_read report.speedup_vs_hta
             kineto.event_ratio recorder.peak_rss.large_vs_small recorder.run_rss.large_vs_small
             recorder.write.vs_read_spill)
  if(NOT want IN_LIST names)
    message(FATAL_ERROR "${JSON} lacks the figure ${want}")
  endif()
endforeach()
message(STATUS "bench.smoke: ${n} figures written to ${JSON}")
