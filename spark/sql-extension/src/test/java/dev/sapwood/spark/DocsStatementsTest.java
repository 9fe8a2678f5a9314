package dev.sapwood.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/spark.md against the grammar: every form its statement list gives has
 * its rows in {@link GrammarTest}'s table, and every statement of ours the page
 * shows (the session's {@code sql("...")} lines, the dbt project's hooks, the
 * statements a refused merge suggests) parses. The page's path comes from
 * the build (pom.xml: {@code sapwood.docs}).
 */
class DocsStatementsTest {
    /** Each form of the page's statement list, and the table rows that read it. */
    private static final Map<String, String> FORMS = new LinkedHashMap<>();

    static {
        FORMS.put("CREATE (BRANCH|TAG) [IF NOT EXISTS] name [IN c] [FROM ref] "
                + "[AT [TIMESTAMP|COMMIT] x]", "CREATE_REFERENCE");
        FORMS.put("DROP (BRANCH|TAG) [IF EXISTS] name [IN c]", "DROP_REFERENCE");
        FORMS.put("USE REFERENCE name [AT [TIMESTAMP|COMMIT] x] [IN c]", "USE_REFERENCE");
        FORMS.put("LIST REFERENCES [IN c]", "LIST_REFERENCES");
        FORMS.put("SHOW REFERENCE [IN c]", "SHOW_REFERENCE");
        FORMS.put("ASSIGN (BRANCH|TAG) name [TO ref] [AT [TIMESTAMP|COMMIT] x] [IN c]",
                "ASSIGN_REFERENCE");
        FORMS.put("MERGE BRANCH [name] [AT [TIMESTAMP|COMMIT] x] [INTO branch] [IN c] [DRY RUN] "
                + "[FORCE (ns.key [, ...])] [DROP (ns.key [, ...])]", "MERGE_BRANCH");
        FORMS.put("SHOW LOG [ref] [AT [TIMESTAMP|COMMIT] x] [IN c]", "SHOW_LOG");
        FORMS.put("SHOW DIFF from_ref to_ref [IN c]", "SHOW_DIFF");
        FORMS.put("SHOW VIEW HISTORY ns.view [IN c]", "VIEW_HISTORY");
        FORMS.put("SHOW VIEW LINEAGE ns.view [IN c]", "VIEW_LINEAGE");
        FORMS.put("SHOW VIEW DEPENDENTS ns.table_or_view [IN c]", "VIEW_DEPENDENTS");
        FORMS.put("RESTORE ns.view [, ns.other ...] FROM (ref | TIMESTAMP 'instant') [IN c]",
                "RESTORE");
    }

    private static final Pattern FENCE = Pattern.compile("^```(\\w*)\\n(.*?)^```",
            Pattern.MULTILINE | Pattern.DOTALL);

    private static String docs() throws IOException {
        String path = System.getProperty("sapwood.docs");
        assertNotNull(path, "the build sets sapwood.docs (pom.xml)");
        return Files.readString(Path.of(path), StandardCharsets.UTF_8);
    }

    /** The page's fenced blocks of one language. */
    private static List<String> blocks(String text, String lang) {
        List<String> out = new ArrayList<>();
        Matcher m = FENCE.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(lang)) {
                out.add(m.group(2));
            }
        }
        return out;
    }

    @Test
    void everyFormThePageListsHasItsRowsInTheTable() throws Exception {
        List<String> listed = new ArrayList<>();
        for (String block : blocks(docs(), "sql")) {
            // A form continues on the next line when that line is indented.
            for (String line : block.replaceAll("\\n\\s+", " ").split("\\n")) {
                if (!line.isBlank()) {
                    listed.add(line.trim());
                }
            }
        }
        assertEquals(new ArrayList<>(FORMS.keySet()), listed,
                "docs/spark.md's statement list changed: give each new form its rows in "
                        + "GrammarTest.statements and GrammarTest.malformed, and its line here");
        Set<Statement.Kind> tested = EnumSet.noneOf(Statement.Kind.class);
        GrammarTest.statements().forEach(a -> tested.add(
                Statement.Kind.valueOf(((String) a.get()[1]).split(" ")[0])));
        for (Map.Entry<String, String> form : FORMS.entrySet()) {
            assertTrue(tested.contains(Statement.Kind.valueOf(form.getValue())),
                    "no row of GrammarTest.statements reads " + form.getKey());
        }
    }

    @Test
    void everyStatementOfOursOnThePageParses() throws Exception {
        String text = docs();
        List<String> shown = new ArrayList<>();
        for (String block : blocks(text, "python")) {
            collect(block, Pattern.compile("sql\\(\"([^\"]+)\"\\)"), shown);
        }
        for (String block : blocks(text, "yaml")) {
            // The dbt project's hooks, with its variable's value.
            collect(block.replace("{{ var('branch') }}", "dbt_run"),
                    Pattern.compile("\"([^\"]+)\""), shown);
        }
        for (String block : blocks(text, "text")) {
            // The statements a refused merge suggests, over the block's lines.
            collect(block.replaceAll("\\s*\\n\\s*", " "),
                    Pattern.compile("with (MERGE BRANCH [^,\\[]*?\\))"), shown);
        }
        Set<Statement.Kind> kinds = EnumSet.noneOf(Statement.Kind.class);
        List<String> problems = new ArrayList<>();
        for (String sql : shown) {
            try {
                Statement s = Grammar.parse(sql);
                if (s != null) {
                    kinds.add(s.kind);
                }
            } catch (SyntaxError e) {
                problems.add(sql + ": " + e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            fail("statements on docs/spark.md that do not parse:\n" + String.join("\n", problems));
        }
        // The page's session and dbt project use these; a lost extraction fails here.
        assertTrue(kinds.containsAll(EnumSet.of(Statement.Kind.CREATE_REFERENCE,
                Statement.Kind.USE_REFERENCE, Statement.Kind.SHOW_DIFF,
                Statement.Kind.MERGE_BRANCH, Statement.Kind.SHOW_LOG,
                Statement.Kind.VIEW_HISTORY, Statement.Kind.VIEW_LINEAGE,
                Statement.Kind.DROP_REFERENCE, Statement.Kind.LIST_REFERENCES)),
                "statements found: " + shown);
        assertTrue(shown.contains("MERGE BRANCH dev INTO main IN sw FORCE (shop.v)"), "" + shown);
        assertTrue(shown.contains("MERGE BRANCH dbt_run INTO main IN sw"), "" + shown);
    }

    private static void collect(String text, Pattern pattern, List<String> into) {
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            into.add(m.group(1));
        }
    }
}
