// Durations live with the upstream's timeline, which the fake upstream's control API reads too.
export { formatDuration, parseDuration } from '../upstream/duration.js';
