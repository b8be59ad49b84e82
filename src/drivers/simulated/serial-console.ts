import { Duplex } from 'node:stream';
import type { Clock, Timer } from '../../domain/clock.js';
import { bootSequence } from './boot-output.js';
import type { BootKind, BootTarget } from './boot-output.js';

/** What the simulated machine behind the serial line is doing. */
const TtyMode = { Off: 'off', Booting: 'booting', Login: 'login', Password: 'password' } as const;
type TtyMode = (typeof TtyMode)[keyof typeof TtyMode];

export interface SerialConsoleDeps {
  readonly clock: Clock;
  /** The node as it is now (its name and properties may change while it runs). */
  readonly node: () => BootTarget;
  readonly bootOutputMs: number;
  readonly poweredOn: boolean;
}

/**
 * One node's serial line. It exists as long as the node does and follows its power (booting, then a getty);
 * viewers attach with `open()` while the console is enabled. Like a console server, every viewer sees the same
 * output and anyone's keystrokes go to the one machine, whose tty echoes them (so all viewers see them too).
 */
export class SerialConsole {
  private readonly sessions = new Set<Duplex>();
  private mode: TtyMode;
  private line = '';
  private inEscape = false;
  private lastWasCr = false;
  private bootTimer: Timer | null = null;
  /** The getty's prompt: the installed system's, or the agent ramdisk's while Ironic cleans or deploys. */
  private prompt: string;

  constructor(private readonly deps: SerialConsoleDeps) {
    this.mode = deps.poweredOn ? TtyMode.Login : TtyMode.Off;
    this.prompt = bootSequence(deps.node(), 'os').loginPrompt;
  }

  get viewerCount(): number {
    return this.sessions.size;
  }

  /** A new viewer: a banner, then whatever the machine shows now; its writes are keystrokes. */
  open(): Duplex {
    const session: Duplex = new Duplex({
      read() {},
      write: (chunk: Buffer | string, encoding: BufferEncoding, done: (err?: Error | null) => void) => {
        this.input(typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk);
        done();
      },
    });
    session.on('close', () => this.sessions.delete(session));
    this.sessions.add(session);
    const node = this.deps.node();
    const tty = bootSequence(node, 'os').issue.split(' ').pop();
    let text = `[Leasehold simulated serial console: ${node.name} (${node.uuid}) on ${tty}]\r\n`;
    if (this.mode === TtyMode.Off) text += '[the node is powered off: its output will appear here when it powers on]\r\n';
    if (this.mode === TtyMode.Login) text += `\r\n${this.prompt}`;
    session.push(Buffer.from(text, 'utf8'));
    return session;
  }

  /** The node powered on or was reset: its boot messages scroll by, then the login prompt. */
  boot(kind: BootKind = 'os'): void {
    this.cancelBoot();
    this.mode = TtyMode.Booting;
    this.line = '';
    const sequence = bootSequence(this.deps.node(), kind);
    const finish = () => {
      this.bootTimer = null;
      this.mode = TtyMode.Login;
      this.prompt = sequence.loginPrompt;
      this.emit(`\r\n${sequence.issue}\r\n\r\n${sequence.loginPrompt}`);
    };
    if (this.sessions.size === 0) {
      // Nobody is watching: skip the per-line timers, only the end of the boot matters.
      this.bootTimer = this.deps.clock.setTimer(this.deps.bootOutputMs, finish);
      return;
    }
    if (this.deps.bootOutputMs <= 0) {
      this.emit(sequence.lines.map((l) => `${l}\r\n`).join(''));
      finish();
      return;
    }
    // Line i appears at i/(n+1) of the boot time, in whole milliseconds, so the prompt comes exactly at the end.
    const count = sequence.lines.length;
    const at = (i: number) => Math.round((this.deps.bootOutputMs * i) / (count + 1));
    const next = (index: number) => {
      this.bootTimer = this.deps.clock.setTimer(at(index + 1) - at(index), () => {
        const line = sequence.lines[index];
        if (line === undefined) return finish();
        this.emit(`${line}\r\n`);
        next(index + 1);
      });
    };
    next(0);
  }

  /** A hard power off (what a BMC does): the output just stops. */
  powerOff(): void {
    this.cancelBoot();
    this.mode = TtyMode.Off;
    this.line = '';
  }

  /** Ends every viewer's stream (console disabled, node removed, driver closed). */
  closeViewers(): void {
    for (const session of this.sessions) {
      session.push(null);
      session.end();
    }
    this.sessions.clear();
  }

  /** Stops everything: no timer survives the node. */
  dispose(): void {
    this.cancelBoot();
    this.closeViewers();
  }

  private cancelBoot(): void {
    this.bootTimer?.cancel();
    this.bootTimer = null;
  }

  private emit(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    for (const session of this.sessions) session.push(bytes);
  }

  /** The tty's line discipline: echo, CR → CRLF, backspace, ^C; escape sequences are swallowed. */
  private input(bytes: Buffer): void {
    let echo = '';
    for (const byte of bytes.toString('latin1')) {
      const code = byte.charCodeAt(0);
      if (this.inEscape) {
        // CSI sequences (arrow keys...) end with a letter or '~'; the introducer '[' does not end them.
        if ((code >= 0x40 && code <= 0x7e && byte !== '[') || code < 0x20) this.inEscape = false;
        continue;
      }
      const wasCr = this.lastWasCr;
      this.lastWasCr = byte === '\r';
      if (byte === '\n' && wasCr) continue; // CRLF from a client counts as one Enter
      if (byte === '\r' || byte === '\n') {
        echo += '\r\n';
        this.emit(echo);
        echo = '';
        this.enter();
      } else if (code === 0x7f || code === 0x08) {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          if (this.mode !== TtyMode.Password) echo += '\b \b';
        }
      } else if (code === 0x03) {
        echo += '^C\r\n';
        this.line = '';
        if (this.mode === TtyMode.Login || this.mode === TtyMode.Password) {
          this.mode = TtyMode.Login;
          echo += this.prompt;
        }
      } else if (code === 0x1b) {
        this.inEscape = true;
      } else if (code >= 0x20) {
        this.line += byte;
        if (this.mode !== TtyMode.Password) echo += byte;
      }
    }
    if (echo) this.emit(echo);
  }

  /** A full line was typed: the getty asks for a password, and no password is right on simulated hardware. */
  private enter(): void {
    const typed = this.line.trim();
    this.line = '';
    if (this.mode === TtyMode.Login) {
      this.emit(typed === '' ? this.prompt : 'Password: ');
      if (typed !== '') this.mode = TtyMode.Password;
    } else if (this.mode === TtyMode.Password) {
      this.mode = TtyMode.Login;
      this.emit(`\r\nLogin incorrect\r\n${this.prompt}`);
    }
  }
}
