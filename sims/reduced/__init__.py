"""The reduced simulator: G_t processes (i.i.d. and non-stationary), online controllers
(DualGA, SRL, backpressure) and the runner against the hindsight optimum."""
