# Test kinds: every test carries one of these labels, so that the suite's
# strength shows (tests/run.sh prints a count of each):
#   unit         a C unit test (cmocka), of one module's functions;
#   closed_form  a whole run, computation or command whose figures are
#                checked against values derived by hand (in the comment above
#                the test), to a stated tolerance;
#   golden       a summary compared byte for byte with a committed one, whose
#                content's invariants are checked too;
#   smoke        a shipped scenario that runs, with its figures in ranges;
#   contract     a command line's contract: exit status, messages, the keys
#                and figures of its JSON (not `cli`: that label is the
#                library sim/cli's, as every library's folder names its tests);
#   script       a scripted check of another kind (two runs compared, a file
#                written and read back, a tool's output parsed).
# The helpers record unit (ks_add_test, ks_add_kernel_test) and contract
# (ks_cli_test and the other test_cli wrappers) as they register; ks_kind
# marks a test's kind where its .cmake file knows better; a name says
# golden (golden), smoke (cli_shipped_*) or closed_form (closed_form). The
# rest is script. A test that needs a GPU also carries the label gpu: with
# KS_TESTS_STRICT (CI) only those may skip; for every other test the skip
# code (77: a tool or a feature missing) becomes a failure.
option(KS_TESTS_STRICT "tests that skip for a missing tool fail instead (only gpu tests may skip)" OFF)

# ks_kind(KIND TESTS...): TESTS are of KIND.
function(ks_kind kind)
  set_property(GLOBAL APPEND PROPERTY KS_KIND_${kind} ${ARGN})
endfunction()

# ks_gpu_tests(TESTS...): TESTS need a GPU to do their job (elsewhere they
# check what they can, then skip).
function(ks_gpu_tests)
  set_property(TEST ${ARGN} APPEND PROPERTY LABELS gpu)
endfunction()

# ks_settle_tests(): called once every test is registered: each test's kind
# label, KS_PYTHON in its environment (tests/CMakeLists.txt), and under
# KS_TESTS_STRICT no skip code but for the gpu tests.
function(ks_settle_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  set(kinds closed_form golden smoke unit contract) # explicit marks first, in this order
  foreach(k ${kinds})
    get_property(marked_${k} GLOBAL PROPERTY KS_KIND_${k})
  endforeach()
  foreach(t ${tests})
    set(kind script)
    if(t IN_LIST marked_closed_form OR t MATCHES "closed_form")
      set(kind closed_form)
    elseif(t IN_LIST marked_golden OR t MATCHES "golden")
      set(kind golden)
    elseif(t IN_LIST marked_smoke OR t MATCHES "^cli_shipped_")
      set(kind smoke)
    elseif(t IN_LIST marked_unit)
      set(kind unit)
    elseif(t IN_LIST marked_contract)
      set(kind contract)
    endif()
    set_property(TEST ${t} APPEND PROPERTY LABELS ${kind})
    if(KS_PYTHON)
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT KS_PYTHON=${KS_PYTHON})
    endif()
    if(KS_TESTS_STRICT)
      get_test_property(${t} LABELS labels)
      if(NOT "gpu" IN_LIST labels)
        set_property(TEST ${t} PROPERTY SKIP_RETURN_CODE)
      endif()
    endif()
  endforeach()
endfunction()
