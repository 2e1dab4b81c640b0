import { describe, expect, it } from "vitest";
import { toolResultText, utf8Bytes } from "../../src/downstream/tool-result-text";

describe("toolResultText", () => {
  it("joins text blocks and counts UTF-8 bytes", () => {
    const flat = toolResultText({
      content: [
        { type: "text", text: "första" },
        { type: "text", text: "två" },
      ],
    });
    expect(flat).toEqual({ text: "första\n\ntvå", bytes: utf8Bytes("första\n\ntvå"), isError: false });
    expect(flat.bytes).toBe(13); // ö and å are two bytes each
  });

  it("uses structuredContent as JSON when there is no text", () => {
    expect(toolResultText({ content: [], structuredContent: { sum: 5 } }).text).toBe('{"sum":5}');
    expect(toolResultText({ content: [{ type: "text", text: "5" }], structuredContent: { sum: 5 } }).text).toBe("5");
  });

  it("describes binary content by type and size instead of inlining base64", () => {
    const data = btoa("x".repeat(3_000));
    const flat = toolResultText({
      content: [
        { type: "image", data, mimeType: "image/png" },
        { type: "audio", data: btoa("ab"), mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: btoa("abcd") } },
        { type: "resource", resource: { uri: "file:///a.txt", text: "inline text" } },
        { type: "resource_link", uri: "https://example.com/doc", name: "doc", mimeType: "text/html" },
      ],
      isError: true,
    });
    expect(flat.text).not.toContain(data);
    expect(flat.text).toContain("[image: image/png, 3000 bytes]");
    expect(flat.text).toContain("[audio: audio/wav, 2 bytes]");
    expect(flat.text).toContain("[resource: file:///a.bin, application/octet-stream, 4 bytes]");
    expect(flat.text).toContain("[resource file:///a.txt]\ninline text");
    expect(flat.text).toContain("[resource link: doc <https://example.com/doc>, text/html]");
    expect(flat.isError).toBe(true);
  });
});
