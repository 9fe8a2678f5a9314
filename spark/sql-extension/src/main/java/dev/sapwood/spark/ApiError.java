package dev.sapwood.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** The server refused a versioning request: its status, Nessie error code and reason. */
final class ApiError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    final int status;
    final String code;
    /** The conflicting keys and why, for a refused merge, restore or assign. */
    final List<String> conflicts;
    /** The conflicting keys alone ({@code ns.name}). */
    final List<String> keys;

    ApiError(int status, String code, String message, List<String> conflicts) {
        this(status, code, message, conflicts, new ArrayList<>());
    }

    ApiError(int status, String code, String message, List<String> conflicts,
             List<String> keys) {
        super(message);
        this.status = status;
        this.code = code == null ? "" : code;
        this.conflicts = conflicts;
        this.keys = keys;
    }

    /** From Nessie's error body ({@code status, reason, message, errorCode, errorDetails})
     * or an Iceberg one ({@code error.message}); raw text for anything else. */
    static ApiError of(int status, JsonNode body, String raw) {
        if (body == null || !body.isObject()) {
            String text = raw.length() > 300 ? raw.substring(0, 300) : raw;
            return new ApiError(status, "", text.isEmpty() ? "HTTP " + status : text,
                    new ArrayList<>());
        }
        String message = body.path("message").asText(
                body.path("error").path("message").asText("HTTP " + status));
        List<String> conflicts = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (JsonNode c : body.path("errorDetails").path("conflicts")) {
            String key = Json.dotted(c.path("key"));
            String type = c.path("conflictType").asText("");
            conflicts.add(key.isEmpty() ? type : key + ": " + type);
            if (!key.isEmpty()) {
                keys.add(key);
            }
        }
        return new ApiError(status, body.path("errorCode").asText(""), message, conflicts,
                keys);
    }

    /** The server's words, the conflicting keys, and the status. */
    String describe() {
        StringBuilder out = new StringBuilder(getMessage());
        if (!conflicts.isEmpty()) {
            out.append(" [").append(String.join(", ", conflicts)).append("]");
        }
        out.append(" (HTTP ").append(status);
        if (!code.isEmpty()) {
            out.append(' ').append(code);
        }
        return out.append(')').toString();
    }
}
