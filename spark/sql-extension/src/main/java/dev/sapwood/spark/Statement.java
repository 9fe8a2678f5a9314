package dev.sapwood.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** One parsed statement of the extension: what the grammar read, nothing resolved yet. */
final class Statement implements Serializable {
    private static final long serialVersionUID = 1L;

    enum Kind {
        CREATE_REFERENCE, DROP_REFERENCE, USE_REFERENCE, LIST_REFERENCES, SHOW_REFERENCE,
        ASSIGN_REFERENCE, MERGE_BRANCH, SHOW_LOG, SHOW_DIFF, VIEW_HISTORY, VIEW_LINEAGE,
        VIEW_DEPENDENTS, RESTORE
    }

    /** {@code AT [TIMESTAMP|COMMIT] x}: a point on a reference. */
    static final class At implements Serializable {
        private static final long serialVersionUID = 1L;
        // A hash has a hex letter; all digits is an instant in epoch ms.
        private static final Pattern HASH = Pattern.compile("(?=.*[a-fA-F])[0-9a-fA-F]{6,64}");

        final String kind; // TIMESTAMP, COMMIT, or null (guessed from the value)
        final String value;

        At(String kind, String value) {
            this.kind = kind;
            this.value = value;
        }

        boolean isCommit() {
            return kind == null ? HASH.matcher(value).matches() : kind.equals("COMMIT");
        }

        /** {@code ref@hash} or {@code ref*instant}: the server's reference grammar. */
        String on(String ref) {
            return ref + (isCommit() ? "@" : "*") + value;
        }

        @Override
        public String toString() {
            return "AT " + (kind == null ? "" : kind + " ") + value;
        }
    }

    final Kind kind;
    final String text;
    String refType;        // BRANCH or TAG
    boolean ifFlag;        // IF NOT EXISTS / IF EXISTS
    String name;           // the reference the statement is about (may be null: the current one)
    String catalog;        // IN c (null: the session's current catalog)
    String from;           // CREATE ... FROM ref; SHOW DIFF's first ref
    At at;
    String to;             // ASSIGN ... TO ref; SHOW DIFF's second ref
    String into;           // MERGE ... INTO ref
    boolean dryRun;
    boolean fromInstant;   // RESTORE ... FROM TIMESTAMP t
    final List<List<String>> keys = new ArrayList<>();
    // MERGE ... FORCE (k, ...) DROP (k, ...): per key, take the source's change or keep
    // the target's value.
    final List<List<String>> force = new ArrayList<>();
    final List<List<String>> drop = new ArrayList<>();

    Statement(Kind kind, String text) {
        this.kind = kind;
        this.text = text;
    }

    /** The statement as typed, one line: how errors and plans name it. */
    @Override
    public String toString() {
        return text.replaceAll("\\s+", " ").replaceAll("[\\s;]+$", "").trim();
    }
}
