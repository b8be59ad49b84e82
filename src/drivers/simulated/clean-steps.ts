import { InvalidRequestError } from '../../domain/errors.js';
import { ProvisionVerb } from '../hardware-driver.js';
import type { ProvisionOptions } from '../hardware-driver.js';
import { ironicMessages } from './ironic-messages.js';

export interface CleanStep {
  readonly interface: string;
  readonly step: string;
}

/** The clean steps the simulated hardware supports (`interface.step`); others fail cleaning, as in Ironic. */
export const SUPPORTED_CLEAN_STEPS: readonly string[] = [
  'deploy.erase_devices',
  'deploy.erase_devices_metadata',
  'deploy.erase_devices_express',
  'raid.delete_configuration',
  'raid.create_configuration',
  'bios.factory_reset',
  'bios.apply_configuration',
  'management.reset_bios_to_default',
];

/** The step automated cleaning runs (Ironic's default priorities run metadata erasure only). */
export const AUTOMATED_CLEAN_STEP: CleanStep = { interface: 'deploy', step: 'erase_devices_metadata' };

/**
 * The clean steps a verb runs: the caller's for `clean` (required, as in Ironic's API), automated cleaning's
 * otherwise. Malformed steps are refused at once (Ironic's API validates their shape); steps the hardware does
 * not support are accepted here and fail the cleaning later (Ironic's conductor finds out in its worker).
 */
export function cleanStepsFor(verb: ProvisionVerb, options: ProvisionOptions): readonly CleanStep[] {
  if (verb !== ProvisionVerb.Clean) {
    if (options.cleanSteps !== undefined) {
      throw new InvalidRequestError('"clean_steps" is only valid when setting target provision state to clean');
    }
    return [AUTOMATED_CLEAN_STEP];
  }
  if (!Array.isArray(options.cleanSteps)) throw new InvalidRequestError(ironicMessages.cleanStepsRequired());
  return options.cleanSteps.map((raw, index) => {
    const args: unknown = raw.args;
    const validArgs = args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args));
    if (typeof raw.interface !== 'string' || typeof raw.step !== 'string' || !validArgs) {
      throw new InvalidRequestError(ironicMessages.badCleanStep(index));
    }
    return { interface: raw.interface, step: raw.step };
  });
}

/** A step as Ironic writes it in `last_error`. */
export function describeStep(step: CleanStep): string {
  return `{"interface": "${step.interface}", "step": "${step.step}"}`;
}
