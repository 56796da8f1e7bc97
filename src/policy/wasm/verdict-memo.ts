import type { RuleOutcome } from './abi.js';

/**
 * What a rule asks the host about its call: the kind (KIND_QUESTION), a context field (its id in
 * FIELDS) or a top-level argument (its name).
 */
export type Question = number | string;
export const KIND_QUESTION = -1;

/** How a memo asks the call at hand the questions a rule asked. */
export interface Answering {
  answer(question: Question): string | null;
}

/** Above this many characters of answers a call's verdict is not remembered (a long prompt, a file written by a command). */
const MAX_RUN_CHARS = 4096;
/** A memo holding more characters than this starts again empty. */
const MAX_MEMO_CHARS = 1 << 16;
/** Calls a memo looks up before it judges whether it earns its keep... */
const SAMPLE_LOOKUPS = 256;
/** ...which it does with at least this many of them answered... */
const MIN_HITS = SAMPLE_LOOKUPS / 8;
/** ...or else it stands aside for this many calls (they run unrecorded), then looks up again. */
const STAND_ASIDE_CALLS = 7 * SAMPLE_LOOKUPS;

/** A question asked at this point of the runs below it, and where each of its answers leads. */
class Branch {
  readonly next = new Map<string | null, Branch | Run>();
  constructor(readonly question: Question) {}
}

/** The rest of one run: the questions it asked from here on, the answers it was given, its verdict. */
class Run {
  constructor(
    readonly asked: readonly Question[],
    readonly answers: ReadonlyArray<string | null>,
    readonly outcome: RuleOutcome,
  ) {}
}

/**
 * The verdicts a rule reached, by the answers it was given. A rule whose state is put back after
 * every call (an arena rule) and that can learn nothing but what the host answers it is a function
 * of those answers: the first question it asks is always the same, each next one follows from the
 * answers so far, and its verdict from all of them. So a call that gives the answers a run was
 * given to the questions it asked gets that run's verdict without running the rule. Only verdicts
 * are remembered; a run that failed is run again next time.
 *
 * The runs form a tree of questions whose branches are answers; the rest of a run hangs from the
 * first answer no other run shares, unbranched until another run parts from it.
 *
 * Looking a call up and recording a run costs a fraction of running the rule: a memo whose calls
 * are seldom ones it has seen (every command new) stands aside for a while, and tries again.
 *
 * The one thing a call leaves that an arena rule can see is the size of its memory, which grows and
 * is not given back: the verdicts remembered at one size are dropped when it changes, and a run
 * that grew it is not remembered. A run that asks otherwise than a remembered one given the same
 * answers, or reaches another verdict, shows the rule reads something else the host does not
 * answer: the memo then turns itself off.
 */
export class VerdictMemo {
  private root: Branch | Run | null = null;
  private chars = 0;
  private off = false;
  /** The size of the rule's memory the verdicts were reached at. */
  private memoryBytes = -1;
  /** The run being recorded: its questions in order (a question asked again at once counted once) and their answers. */
  private readonly asked: Question[] = [];
  private readonly answers: Array<string | null> = [];
  private count = 0;
  private runChars = 0;
  private lookups = 0;
  private hits = 0;
  private asideFor = 0;
  private answeredCount = 0;

  get enabled(): boolean {
    return !this.off;
  }

  /** Calls answered from the memo. */
  get answered(): number {
    return this.answeredCount;
  }

  /** Whether this call is looked up (and its run recorded): not once the memo is off, nor while it stands aside. */
  active(): boolean {
    if (this.off) return false;
    if (this.asideFor === 0) return true;
    this.asideFor--;
    return false;
  }

  /** The verdict remembered for `call`, or undefined when the rule must run. */
  recall(call: Answering): RuleOutcome | undefined {
    const outcome = this.find(call);
    if (outcome !== undefined) {
      this.hits++;
      this.answeredCount++;
    }
    if (++this.lookups === SAMPLE_LOOKUPS) {
      if (this.hits < MIN_HITS) this.asideFor = STAND_ASIDE_CALLS;
      this.lookups = 0;
      this.hits = 0;
    }
    return outcome;
  }

  private find(call: Answering): RuleOutcome | undefined {
    let at = this.root ?? undefined;
    while (at instanceof Branch) at = at.next.get(call.answer(at.question));
    if (at === undefined) return undefined;
    const { asked, answers } = at;
    for (let i = 0; i < asked.length; i++) if (call.answer(asked[i]!) !== answers[i]) return undefined;
    return at.outcome;
  }

  /** A run starts: what it asks is recorded from now on. */
  begin(): void {
    this.count = 0;
    this.runChars = 0;
  }

  /** The running rule asked `question` and was answered `answer`. */
  observe(question: Question, answer: string | null): void {
    if (this.runChars > MAX_RUN_CHARS) return;
    const n = this.count;
    if (n > 0 && this.asked[n - 1] === question) return;
    this.asked[n] = question;
    this.answers[n] = answer;
    this.count = n + 1;
    this.runChars += 1 + (answer?.length ?? 0);
  }

  /** The run that began last returned `outcome`; the rule's memory was `startBytes` long when it began, `endBytes` now. */
  remember(outcome: RuleOutcome, startBytes: number, endBytes: number): void {
    if (this.off) return;
    if (endBytes !== this.memoryBytes) {
      this.forgetVerdicts();
      this.memoryBytes = endBytes;
    }
    // A run that grew the memory began where no later call begins.
    if (startBytes !== endBytes || this.runChars > MAX_RUN_CHARS) return;
    const size = this.runChars + outcome.reason.length;
    if (this.chars + size > MAX_MEMO_CHARS) this.forgetVerdicts();
    this.chars += size;
    const { asked, answers, count } = this;
    let parent: Branch | null = null;
    let at = this.root ?? undefined;
    let i = 0;
    while (at instanceof Branch) {
      if (i === count || at.question !== asked[i]) return this.turnOff();
      parent = at;
      at = at.next.get(answers[i]!);
      i++;
    }
    if (at === undefined) return this.place(parent, answers[i - 1]!, this.runFrom(i, outcome));
    // Another run hangs here: the two share questions and answers up to a question they answered apart.
    const theirs = at;
    let shared = 0;
    while (shared < theirs.asked.length && i + shared < count && theirs.asked[shared] === asked[i + shared] && theirs.answers[shared] === answers[i + shared]) {
      shared++;
    }
    if (shared === theirs.asked.length || i + shared === count || theirs.asked[shared] !== asked[i + shared]) {
      // Both ended together (the same run again), or one asked on where the other ended, or asked another question.
      if (shared !== theirs.asked.length || i + shared !== count || theirs.outcome.action !== outcome.action || theirs.outcome.reason !== outcome.reason) this.turnOff();
      return;
    }
    const fork = new Branch(asked[i + shared]!);
    fork.next.set(theirs.answers[shared]!, new Run(theirs.asked.slice(shared + 1), theirs.answers.slice(shared + 1), theirs.outcome));
    fork.next.set(answers[i + shared]!, this.runFrom(i + shared + 1, outcome));
    let top: Branch = fork;
    for (let k = i + shared - 1; k >= i; k--) {
      const step = new Branch(asked[k]!);
      step.next.set(answers[k]!, top);
      top = step;
    }
    this.place(parent, answers[i - 1]!, top);
  }

  /** The recorded run from its `from`th question on. */
  private runFrom(from: number, outcome: RuleOutcome): Run {
    return new Run(this.asked.slice(from, this.count), this.answers.slice(from, this.count), outcome);
  }

  private place(parent: Branch | null, answer: string | null, node: Branch | Run): void {
    if (parent === null) this.root = node;
    else parent.next.set(answer, node);
  }

  private turnOff(): void {
    this.off = true;
    this.forgetVerdicts();
  }

  private forgetVerdicts(): void {
    this.root = null;
    this.chars = 0;
  }
}

/** The imports a rule may have for its verdicts to be remembered: any other (a clock, a random seed, a trace) tells it something the host does not answer, or does something a remembered verdict would skip. */
export function importsAnswerOnlyTheHost(module: WebAssembly.Module): boolean {
  return WebAssembly.Module.imports(module).every((i) => i.module === 'svc' || (i.module === 'env' && (i.name === 'memory' || i.name === 'abort')));
}
