/** Moved: the body readers to ./read-body, the request's state to ../pipeline/request-state. */
export { readChainBody, readInputBody } from './read-body';
export { createState, fixPlan, type StateInit } from '../pipeline/request-state';
