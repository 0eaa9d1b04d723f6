# The step driver (sim/step/step.h) driven by a scripted clock: closed forms
# for a step's time, the waits per layer and the order of confirms.
