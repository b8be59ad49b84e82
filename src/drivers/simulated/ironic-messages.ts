/**
 * The messages Ironic itself uses for the situations the simulated driver reproduces, so what operators and
 * tests see in `last_error` and in errors reads the same whichever driver is behind Leasehold.
 */
export const ironicMessages = {
  invalidState: (action: string, node: string, state: string) =>
    `The requested action "${action}" can not be performed on node "${node}" while it is in state "${state}".`,
  nodeLocked: (node: string, host: string) =>
    `Node ${node} is locked by host ${host}, please retry after the current operation is completed.`,
  inMaintenance: (operation: string, node: string) =>
    `The ${operation} operation can't be performed on node ${node} because it's in maintenance mode.`,
  consoleDisabled: (node: string) => `The console of node ${node} is not enabled.`,
  cleanStepsRequired: () => '"clean_steps" is required when setting target provision state to clean',
  badCleanStep: (index: number) =>
    `clean_steps[${index}] must be an object with string "interface" and "step" (and optional "args" object)`,
  unsupportedCleanStep: (node: string, step: string) =>
    `Cannot clean node ${node}. Error: clean step ${step} is not available for node ${node}.`,
  cleanStepFailed: (node: string, step: string) =>
    `Agent returned error for clean step ${step} on node ${node} : Error performing clean step: ` +
    'simulated disk erase failure (injected fault)',
  cleanAborted: () => 'By request, the clean operation was aborted',
  deployFailed: (node: string) =>
    `Deploy step deploy.write_image failed on node ${node}. Image write failed: simulated I/O error (injected fault)`,
  verifyFailed: (node: string) =>
    `Failed to verify node ${node}: could not reach the BMC (simulated power interface fault, injected)`,
  powerFailed: (target: string) =>
    `Failed to change power state to '${target}' by '${target}'. Error: IPMI call failed: simulated BMC did not ` +
    'answer (injected fault)',
} as const;
