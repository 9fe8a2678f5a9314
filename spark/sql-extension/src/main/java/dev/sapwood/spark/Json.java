package dev.sapwood.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reading the API's JSON into the values Spark rows hold. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    /** Text, or null for a missing or null field. */
    static String text(JsonNode node) {
        return node == null || node.isMissingNode() || node.isNull() ? null : node.asText();
    }

    static Instant instant(JsonNode node) {
        String text = text(node);
        return text == null ? null : Instant.parse(text);
    }

    /** A key ({@code {"elements": [...]}}, a bare list, or already text) as {@code ns.name}. */
    static String dotted(JsonNode key) {
        if (key.isTextual()) {
            return key.asText();
        }
        JsonNode elements = key.isArray() ? key : key.path("elements");
        List<String> parts = new ArrayList<>();
        for (JsonNode e : elements) {
            parts.add(e.asText());
        }
        return String.join(".", parts);
    }

    /** An object's fields as text; a list value (a commit's {@code allProperties}
     * holds one per key, as Nessie's does) as its items joined with ", ". */
    static Map<String, String> strings(JsonNode object) {
        Map<String, String> out = new LinkedHashMap<>();
        object.properties().forEach(e -> out.put(e.getKey(),
                e.getValue().isArray() ? String.join(", ", list(e.getValue()))
                        : e.getValue().asText()));
        return out;
    }

    static List<String> list(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : array) {
            out.add(e.asText());
        }
        return out;
    }
}
