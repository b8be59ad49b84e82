/**
 * The CLI's failures, each carrying the exit code it ends the process with, so `run` maps errors to exit codes in
 * one place: 1 the server refused (API error), 2 the command line or local setup is wrong, 3 no server to talk to.
 */
export abstract class CliError extends Error {
  abstract readonly exitCode: number;
}

/** The server answered with an error body (or something that is not the API). */
export class ApiError extends CliError {
  readonly exitCode = 1;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Wrong arguments, missing settings or an unreadable config file: nothing was sent. */
export class UsageError extends CliError {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The server could not be reached (refused, DNS, TLS, timeout). The message names the URL. */
export class UnreachableError extends CliError {
  readonly exitCode = 3;
  constructor(message: string) {
    super(message);
    this.name = 'UnreachableError';
  }
}

/** The command ran but did not get what it was for (a lease was refused or failed, a wait timed out): exit 1. */
export class CommandFailedError extends CliError {
  readonly exitCode = 1;
  constructor(message: string) {
    super(message);
    this.name = 'CommandFailedError';
  }
}

/** Keystone answered but gave no token (refused credentials, an unknown project, not a v3 Keystone): exit 1. */
export class KeystoneError extends CliError {
  readonly exitCode = 1;
  constructor(message: string) {
    super(message);
    this.name = 'KeystoneError';
  }
}
