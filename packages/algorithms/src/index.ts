// @webdpl/algorithms: every algorithm takes an execution policy first and returns a Promise.
// Each family adds its exports below its own marker line (keep the markers).

// @family:transform-reduce

// @family:map

// @family:scan-scatter

// @family:sort
