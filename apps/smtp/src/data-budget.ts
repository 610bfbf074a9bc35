// The relay holds each message in memory from its first DATA byte to the reply (it is parsed and
// stored whole). This budget bounds that memory per process, and one team's share of it, so that
// one team's large messages cannot take what every other team's messages need: a message is
// counted chunk by chunk as it arrives, and a chunk that would pass a bound is not kept (the rest
// is drained and the client gets 452). Per process, not in Redis: it is this process's memory.

export interface DataBudgetLimits {
  /** Bytes all messages in flight may hold together. */
  processBytes: number;
  /** Bytes one team's messages in flight may hold together. */
  teamBytes: number;
  /** Messages of one team in flight at once. */
  teamMessages: number;
}

/** One message's hold on the budget. */
export interface MessageHold {
  /** Counts `bytes` more; false (and nothing counted) when that would pass the team's or the process's bound. */
  add(bytes: number): boolean;
  /** Gives every byte and the team's message place back; later calls do nothing. */
  release(): void;
}

export interface DataBudget {
  /** A place for one message of the team, or why there is none. */
  open(teamId: number): MessageHold | { refused: string };
  /** Why a message of `size` bytes (MAIL FROM SIZE=) could not be taken now, or null when it could. */
  refusalFor(teamId: number, size: number): string | null;
  /** Bytes held now by every message in flight. */
  bytesInFlight(): number;
}

export function createDataBudget(limits: DataBudgetLimits, onChange: (bytesInFlight: number) => void = () => undefined): DataBudget {
  let processHeld = 0;
  const teams = new Map<number, { bytes: number; messages: number }>();
  const teamOf = (teamId: number) => teams.get(teamId) ?? { bytes: 0, messages: 0 };

  const refusalFor = (teamId: number, size: number): string | null => {
    const team = teamOf(teamId);
    if (team.messages >= limits.teamMessages) return `this team already has ${limits.teamMessages} messages in flight`;
    if (team.bytes + size > limits.teamBytes) return "this team's messages in flight would pass its share of the relay's memory";
    if (processHeld + size > limits.processBytes) return "the messages in flight would pass the relay's memory budget";
    return null;
  };

  return {
    open(teamId) {
      const refused = refusalFor(teamId, 0);
      if (refused) return { refused };
      const team = teamOf(teamId);
      team.messages++;
      teams.set(teamId, team);
      let held = 0;
      let open = true;
      return {
        add(bytes) {
          if (!open) return false;
          if (team.bytes + bytes > limits.teamBytes || processHeld + bytes > limits.processBytes) return false;
          held += bytes;
          team.bytes += bytes;
          processHeld += bytes;
          onChange(processHeld);
          return true;
        },
        release() {
          if (!open) return;
          open = false;
          team.bytes -= held;
          processHeld -= held;
          if (--team.messages === 0) teams.delete(teamId);
          onChange(processHeld);
        },
      };
    },
    refusalFor,
    bytesInFlight: () => processHeld,
  };
}
