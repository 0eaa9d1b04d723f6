# The step driver (sim/step/step.h) driven by a scripted clock: closed forms
# for a step's time, the waits per layer and the order of confirms.
ks_add_test(step_step ${CMAKE_CURRENT_LIST_DIR}/test_step.c)
target_link_libraries(step_step PRIVATE ks_step)
set_property(TEST step_step APPEND PROPERTY LABELS step)
