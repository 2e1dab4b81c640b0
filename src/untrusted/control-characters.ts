/**
 * Terminal escape sequences removed whole, so no parameter bytes are left behind as text:
 * CSI (`ESC [` or C1 `0x9B`, parameters, intermediates, a final byte) and the string commands
 * OSC, DCS, SOS, PM and APC (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _` or their C1 forms), up to
 * their terminator (BEL or ST) or, when unterminated, the next escape or the end of the text.
 * OSC 8 hyperlinks and OSC 52 clipboard writes are the dangerous ones in a terminal client.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const ESCAPE_SEQUENCE = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?/g;
/** C0 except tab and line feed, DEL, and C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text from models and downstream servers, made safe to show: terminal escape sequences and
 * every other C0/C1 control character removed (a carriage return could overwrite a line in a
 * terminal, a NUL cut a string short), keeping `\n` and `\t`. The one function used where such
 * text leaves Slipsnisse: an expert's answer, tool error or question to the orchestrator, and the
 * dashboard's pages.
 */
export function stripControlCharacters(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, "").replace(CONTROL_CHARACTER, "");
}
