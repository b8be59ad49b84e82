import { Option, type Command } from 'commander';
import { parseLimit } from '../parsers.js';

export interface ListFlags {
  readonly all?: boolean;
  readonly limit?: number;
  readonly marker?: string;
}

/** The paging options every `list` command shares. */
export function listOptions(command: Command): Command {
  return command
    .option('--all', 'fetch every page, following the server\'s next links')
    .addOption(new Option('--limit <n>', 'items per page (1-1000; the server defaults to 100)').argParser(parseLimit))
    .option('--marker <id>', 'start after this item (the marker printed by the previous page)');
}
