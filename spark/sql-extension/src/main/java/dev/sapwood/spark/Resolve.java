package dev.sapwood.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * How to resolve a merge's conflicting keys, said as the statements that do
 * it: {@code FORCE (k)} takes the source's change, {@code DROP (k)} keeps the
 * target's value (the versioning API's per-key modes; the web UI and
 * {@code sapwood merge --force/--drop} say the same).
 */
final class Resolve {
    /** Words the grammar reads as clauses: a name spelled so is backquoted. */
    private static final Set<String> WORDS = new HashSet<>(Arrays.asList(
            "IN", "FROM", "AT", "TO", "INTO", "DRY", "FORCE", "DROP"));

    private Resolve() {
    }

    /** "resolve each key: take dev's change with MERGE … FORCE (k), or keep main's
     * with MERGE … DROP (k)", the statement's own clauses kept. */
    static String hint(Statement s, String source, String into, List<String> keys) {
        return "resolve " + (keys.size() == 1 ? "it" : "each key") + ": take " + source
                + "'s change with " + statement(s, source, into, "FORCE", keys)
                + ", or keep " + into + "'s value with "
                + statement(s, source, into, "DROP", keys);
    }

    private static String statement(Statement s, String source, String into, String mode,
                                    List<String> keys) {
        StringBuilder out = new StringBuilder("MERGE BRANCH ").append(name(source));
        if (s.at != null) {
            out.append(' ').append(s.at);
        }
        out.append(" INTO ").append(name(into));
        if (s.catalog != null) {
            out.append(" IN ").append(name(s.catalog));
        }
        List<String> force = dotted(s.force);
        List<String> drop = dotted(s.drop);
        (mode.equals("FORCE") ? force : drop).addAll(keys);
        clause(out, "FORCE", force);
        clause(out, "DROP", drop);
        return out.toString();
    }

    private static void clause(StringBuilder out, String word, List<String> keys) {
        if (keys.isEmpty()) {
            return;
        }
        List<String> shown = new ArrayList<>();
        for (String k : keys) {
            List<String> parts = new ArrayList<>();
            for (String part : k.split("\\.", -1)) {
                parts.add(name(part));
            }
            shown.add(String.join(".", parts));
        }
        out.append(' ').append(word).append(" (").append(String.join(", ", shown)).append(')');
    }

    private static List<String> dotted(List<List<String>> keys) {
        List<String> out = new ArrayList<>();
        for (List<String> k : keys) {
            out.add(String.join(".", k));
        }
        return out;
    }

    /** A name as the grammar reads it back: bare when it is one word, else backquoted. */
    static String name(String name) {
        boolean bare = !name.isEmpty() && !WORDS.contains(name.toUpperCase(Locale.ROOT));
        for (int k = 0; bare && k < name.length(); k++) {
            char c = name.charAt(k);
            bare = Lexer.isWordChar(c) && c != '@' && c != '*' && c != '~' && c != '^';
        }
        return bare ? name : "`" + name.replace("`", "``") + "`";
    }
}
