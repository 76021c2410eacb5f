// What every framework's agent run checks: the model's first tool call runs a command that
// tells where it ran and writes a file, its second reads the file back, and each next request
// to the model carries what the command printed.

import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeModel } from './model.js';
import { unique, type World } from '../world.js';

/** The version of an installed package, to say which one a test ran. */
export function versionOf(pkg: string): string {
  return JSON.parse(readFileSync(join(process.cwd(), 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

export class AgentRun {
  /** Lower case in the commands, upper case only in what they print: the model's request
   * repeats the commands, so only the upper case proves they ran. */
  readonly marker = unique('note').toLowerCase();
  readonly file: string;

  constructor(
    private readonly world: World,
    dir: string,
  ) {
    this.file = `${dir}/agent-note.txt`;
  }

  /** Prints the pid namespace and whether ~/.ssh is there, and writes the file. */
  get first(): string {
    return [
      'readlink /proc/self/ns/pid',
      `if [ -e ~/.ssh/id_test ] || [ -e ${this.world.secret} ]; then echo ssh:visible; else echo ssh:absent; fi`,
      `printf %s ${this.marker} | tr a-z A-Z > ${this.file}`,
    ].join('; ');
  }

  /** Reads the file back. */
  get second(): string {
    return `cat ${this.file}`;
  }

  /** The model's second request carries the first command's output, its third the second's. */
  check(model: FakeModel): void {
    assert.equal(model.requests.length, 3, 'tool call, tool call, final answer');
    const first = model.toolResults(1).join('\n');
    const ns = /pid:\[\d+\]/.exec(first)?.[0];
    assert.ok(ns, `the first command's output came back: ${first}`);
    assert.notEqual(ns, readlinkSync('/proc/self/ns/pid'), 'the command ran in a pid namespace of its own');
    assert.match(first, /ssh:absent/);
    assert.ok(this.world.secret && readFileSync(this.world.secret), 'the host has the ~/.ssh the sandbox did not see');
    const second = model.toolResults(2).join('\n');
    assert.ok(second.includes(this.marker.toUpperCase()), `the second command read the first one's file: ${second}`);
  }
}
