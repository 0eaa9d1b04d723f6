# The step driver (sim/step/step.h) driven by a scripted clock: closed forms
# for a step's time, the waits per layer and the order of confirms.
ks_add_test(step.step test_step.c)
target_link_libraries(step_step PRIVATE ks_step)

# a GPU's admitted requests (sim/step/active.h), shared by the engine and the runtime
ks_add_test(step.active test_active.c)
target_link_libraries(step_active PRIVATE ks_step)

# a run's result (sim/step/runresult.h): the time series' horizon, and /steps thinned as it grows
ks_add_test(step.runresult test_runresult.c)
target_link_libraries(step_runresult PRIVATE ks_step)

# a decode step's L1 reserve (sim/step/sizing.h): README "one page per active request and layer,
# at most a quarter of L1"
ks_add_test(step.sizing test_sizing.c)
target_link_libraries(step_sizing PRIVATE ks_step)

# the level of detail detail.gpus (sim/step/follow.h): the shapes kept and drawn, a follower's batches
# and reads outside L1 scaled with a carry
ks_add_test(step.follow test_follow.c)
target_link_libraries(step_follow PRIVATE ks_step)
