package dev.sapwood.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The grammar as a table: each statement and what it reads (every field of
 * the {@link Statement}), every malformed one and the token its error points
 * at, and the statements it leaves to Spark. {@link DocsStatementsTest} holds
 * docs/spark.md to this table.
 */
class GrammarTest {
    /** A statement's fields, those set only: {@code KIND [type] [if] name=.. in=..}. */
    static String describe(Statement s) {
        StringBuilder b = new StringBuilder(s.kind.name());
        if (s.refType != null) {
            b.append(' ').append(s.refType);
        }
        if (s.ifFlag) {
            b.append(" if");
        }
        if (s.name != null) {
            b.append(" name=").append(s.name);
        }
        if (!s.keys.isEmpty()) {
            b.append(" keys=").append(keys(s.keys));
        }
        if (s.from != null) {
            b.append(s.fromInstant ? " fromInstant=" : " from=").append(s.from);
        }
        if (s.to != null) {
            b.append(" to=").append(s.to);
        }
        if (s.into != null) {
            b.append(" into=").append(s.into);
        }
        if (s.at != null) {
            b.append(" at=").append(s.at.kind == null ? "" : s.at.kind + ":").append(s.at.value);
        }
        if (s.catalog != null) {
            b.append(" in=").append(s.catalog);
        }
        if (s.dryRun) {
            b.append(" dryRun");
        }
        if (!s.force.isEmpty()) {
            b.append(" force=").append(keys(s.force));
        }
        if (!s.drop.isEmpty()) {
            b.append(" drop=").append(keys(s.drop));
        }
        return b.toString();
    }

    /** Keys as {@code a.b|c.d}; a part holding a dot stays visible as {@code [x.y]}. */
    private static String keys(List<List<String>> keys) {
        List<String> out = new ArrayList<>();
        for (List<String> k : keys) {
            List<String> parts = new ArrayList<>();
            for (String p : k) {
                parts.add(p.contains(".") ? "[" + p + "]" : p);
            }
            out.add(String.join(".", parts));
        }
        return String.join("|", out);
    }

    /** Every form of every statement, each optional clause and spelling at least once. */
    static Stream<Arguments> statements() {
        return Stream.of(
            // CREATE (BRANCH|TAG) [IF NOT EXISTS] name [IN c] [FROM ref] [AT [TIMESTAMP|COMMIT] x]
            Arguments.of("CREATE BRANCH etl", "CREATE_REFERENCE BRANCH name=etl"),
            Arguments.of("create branch if not exists etl in sw from main",
                "CREATE_REFERENCE BRANCH if name=etl from=main in=sw"),
            Arguments.of("CREATE TAG release IN sw", "CREATE_REFERENCE TAG name=release in=sw"),
            Arguments.of("CREATE TAG v1 FROM main AT COMMIT ab12cd IN sw",
                "CREATE_REFERENCE TAG name=v1 from=main at=COMMIT:ab12cd in=sw"),
            Arguments.of("CREATE BRANCH `we``ird` AT TIMESTAMP '2026-11-22T09:00:00Z'",
                "CREATE_REFERENCE BRANCH name=we`ird at=TIMESTAMP:2026-11-22T09:00:00Z"),
            Arguments.of("CREATE BRANCH b AT 2026-11-22T09:00:00Z;",
                "CREATE_REFERENCE BRANCH name=b at=2026-11-22T09:00:00Z"),
            Arguments.of("CREATE BRANCH `in` FROM `from`", "CREATE_REFERENCE BRANCH name=in from=from"),
            // DROP (BRANCH|TAG) [IF EXISTS] name [IN c]
            Arguments.of("DROP BRANCH etl IN sw", "DROP_REFERENCE BRANCH name=etl in=sw"),
            Arguments.of("DROP TAG IF EXISTS release", "DROP_REFERENCE TAG if name=release"),
            // USE REFERENCE name [AT [TIMESTAMP|COMMIT] x] [IN c]
            Arguments.of("USE REFERENCE etl IN sw", "USE_REFERENCE name=etl in=sw"),
            Arguments.of("USE REFERENCE main AT TIMESTAMP '2026-11-22T09:00:00Z' IN sw",
                "USE_REFERENCE name=main at=TIMESTAMP:2026-11-22T09:00:00Z in=sw"),
            Arguments.of("USE REFERENCE main IN sw AT 1764000000000",
                "USE_REFERENCE name=main at=1764000000000 in=sw"),
            Arguments.of("USE REFERENCE etl@ab12cd", "USE_REFERENCE name=etl@ab12cd"),
            Arguments.of("USE REFERENCE `my/branch`", "USE_REFERENCE name=my/branch"),
            // LIST REFERENCES [IN c]
            Arguments.of("LIST REFERENCES", "LIST_REFERENCES"),
            Arguments.of("list references in `sw`", "LIST_REFERENCES in=sw"),
            // SHOW REFERENCE [IN c]
            Arguments.of("SHOW REFERENCE", "SHOW_REFERENCE"),
            Arguments.of("SHOW REFERENCE IN sw", "SHOW_REFERENCE in=sw"),
            // ASSIGN (BRANCH|TAG) name [TO ref] [AT [TIMESTAMP|COMMIT] x] [IN c]
            Arguments.of("ASSIGN BRANCH side TO main IN sw", "ASSIGN_REFERENCE BRANCH name=side to=main in=sw"),
            Arguments.of("ASSIGN TAG v1 AT COMMIT 0123abcd", "ASSIGN_REFERENCE TAG name=v1 at=COMMIT:0123abcd"),
            Arguments.of("ASSIGN BRANCH dev", "ASSIGN_REFERENCE BRANCH name=dev"),
            // MERGE BRANCH [name] [AT ..] [INTO branch] [IN c] [DRY RUN] [FORCE (..)] [DROP (..)]
            Arguments.of("MERGE BRANCH etl INTO main IN sw", "MERGE_BRANCH name=etl into=main in=sw"),
            Arguments.of("MERGE BRANCH etl INTO main IN sw DRY RUN",
                "MERGE_BRANCH name=etl into=main in=sw dryRun"),
            Arguments.of("MERGE BRANCH", "MERGE_BRANCH"),
            Arguments.of("MERGE BRANCH DRY RUN", "MERGE_BRANCH dryRun"),
            Arguments.of("MERGE BRANCH etl AT ab12cd INTO main", "MERGE_BRANCH name=etl into=main at=ab12cd"),
            Arguments.of("MERGE BRANCH dev INTO main IN sw FORCE (shop.v)",
                "MERGE_BRANCH name=dev into=main in=sw force=shop.v"),
            Arguments.of("MERGE BRANCH dev FORCE (a.w, a.x) DROP (`b`.`x.y`) DRY RUN",
                "MERGE_BRANCH name=dev dryRun force=a.w|a.x drop=b.[x.y]"),
            Arguments.of("MERGE BRANCH FORCE (a.v)", "MERGE_BRANCH force=a.v"),
            // FORCE / DROP without a parenthesis are a branch's name.
            Arguments.of("MERGE BRANCH force INTO drop", "MERGE_BRANCH name=force into=drop"),
            // SHOW LOG [ref] [AT [TIMESTAMP|COMMIT] x] [IN c]
            Arguments.of("SHOW LOG", "SHOW_LOG"),
            Arguments.of("SHOW LOG main IN sw", "SHOW_LOG name=main in=sw"),
            Arguments.of("SHOW LOG IN sw", "SHOW_LOG in=sw"),
            Arguments.of("SHOW LOG etl AT TIMESTAMP 1764000000000",
                "SHOW_LOG name=etl at=TIMESTAMP:1764000000000"),
            Arguments.of("SHOW LOG main~2", "SHOW_LOG name=main~2"),
            // SHOW DIFF from_ref to_ref [IN c]
            Arguments.of("SHOW DIFF main etl", "SHOW_DIFF from=main to=etl"),
            Arguments.of("SHOW DIFF main~1 main IN sw", "SHOW_DIFF from=main~1 to=main in=sw"),
            // SHOW VIEW (HISTORY|LINEAGE|DEPENDENTS) ns.name [IN c]
            Arguments.of("SHOW VIEW HISTORY shop.revenue", "VIEW_HISTORY keys=shop.revenue"),
            Arguments.of("show view history audit.v in sw", "VIEW_HISTORY keys=audit.v in=sw"),
            Arguments.of("SHOW VIEW HISTORY v", "VIEW_HISTORY keys=v"),
            Arguments.of("SHOW VIEW LINEAGE shop.revenue", "VIEW_LINEAGE keys=shop.revenue"),
            Arguments.of("SHOW VIEW DEPENDENTS `a`.`b.c` IN sw", "VIEW_DEPENDENTS keys=a.[b.c] in=sw"),
            // RESTORE ns.view [, ns.other ...] FROM (ref | TIMESTAMP 'instant') [IN c]
            Arguments.of("RESTORE audit.v FROM main~1", "RESTORE keys=audit.v from=main~1"),
            Arguments.of("RESTORE a.v, a.w FROM TIMESTAMP '2026-11-22T09:00:00Z' IN sw",
                "RESTORE keys=a.v|a.w fromInstant=2026-11-22T09:00:00Z in=sw"),
            Arguments.of("RESTORE a.v FROM `timestamp`", "RESTORE keys=a.v from=timestamp"),
            // Comments, blank lines and a trailing semicolon.
            Arguments.of("-- publish\nMERGE BRANCH etl\n  INTO main /* the default */ ;",
                "MERGE_BRANCH name=etl into=main"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("statements")
    void reads(String sql, String expected) throws SyntaxError {
        Statement s = Grammar.parse(sql);
        assertNotNull(s, "not taken as ours: " + sql);
        assertEquals(expected, describe(s));
        assertEquals(sql, s.text);
    }

    /** Malformed: the token the error points at, its line and position, the hint. */
    static Stream<Arguments> malformed() {
        return Stream.of(
            Arguments.of("CREATE BRANCH", "end of input", 1, 13, ": expected a reference name"),
            Arguments.of("CREATE BRANCH dev IN", "end of input", 1, 20, ": expected a catalog name"),
            Arguments.of("CREATE BRANCH IF EXISTS x", "'EXISTS'", 1, 17, ": expected NOT"),
            Arguments.of("CREATE BRANCH a IN sw IN sw", "'IN'", 1, 22, ": IN is given twice"),
            Arguments.of("CREATE BRANCH FROM main", "'FROM'", 1, 14, ": expected a reference name"),
            Arguments.of("CREATE BRANCH a AT COMMIT", "end of input", 1, 25,
                ": expected a commit hash"),
            Arguments.of("CREATE BRANCH a TO main", "'TO'", 1, 16, ": extraneous input"),
            Arguments.of("DROP TAG IF v1", "'v1'", 1, 12, ": expected EXISTS"),
            Arguments.of("DROP BRANCH a FROM main", "'FROM'", 1, 14, ": extraneous input"),
            Arguments.of("USE REFERENCE dev AT", "end of input", 1, 20,
                ": expected a commit hash or an instant"),
            Arguments.of("USE REFERENCE dev IN `sw", "'`sw'", 1, 21, ": expected a catalog name"),
            Arguments.of("LIST REFERENCES sw", "'sw'", 1, 16, ": extraneous input"),
            Arguments.of("SHOW REFERENCE main", "'main'", 1, 15, ": extraneous input"),
            Arguments.of("ASSIGN BRANCH", "end of input", 1, 13, ": expected a reference name"),
            Arguments.of("ASSIGN BRANCH a TO", "end of input", 1, 18, ": expected a reference"),
            Arguments.of("MERGE BRANCH etl INTO main IN sw extra", "'extra'", 1, 33,
                ": extraneous input"),
            Arguments.of("MERGE BRANCH etl DRY", "end of input", 1, 20, ": expected RUN"),
            Arguments.of("MERGE BRANCH etl FORCE ns.v", "'ns'", 1, 23,
                ": expected ( and the keys FORCE applies to"),
            Arguments.of("MERGE BRANCH etl FORCE (a.v) DROP (a.v)", "'a'", 1, 35,
                ": a.v is given twice (each key takes FORCE or DROP once)"),
            Arguments.of("MERGE BRANCH etl FORCE (a.v", "end of input", 1, 27, ": expected , or )"),
            Arguments.of("MERGE BRANCH etl FORCE ()", "')'", 1, 24, ": expected a name (ns.name)"),
            Arguments.of("SHOW LOG main AT", "end of input", 1, 16,
                ": expected a commit hash or an instant"),
            Arguments.of("SHOW DIFF main", "end of input", 1, 14,
                ": expected the reference to diff to"),
            Arguments.of("SHOW VIEW TREE a.v", "'TREE'", 1, 10,
                ": expected HISTORY, LINEAGE or DEPENDENTS"),
            Arguments.of("SHOW VIEW HISTORY", "end of input", 1, 17, ": expected a name (ns.name)"),
            Arguments.of("SHOW VIEW LINEAGE a.", "end of input", 1, 20,
                ": expected a name after the dot"),
            Arguments.of("SHOW VIEW DEPENDENTS a.t IN", "end of input", 1, 27,
                ": expected a catalog name"),
            Arguments.of("RESTORE a.v", "end of input", 1, 11, ": expected FROM"),
            Arguments.of("RESTORE a.v FROM", "end of input", 1, 16,
                ": expected a reference (or TIMESTAMP and an instant)"),
            Arguments.of("RESTORE a.v, FROM main", "'FROM'", 1, 13, ": expected a name (ns.name)"),
            // The line and the position in it, for a statement over lines.
            Arguments.of("MERGE BRANCH etl\n  INTO main\n  IN sw sw", "'sw'", 3, 8,
                ": extraneous input"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void pointsAtTheToken(String sql, String near, int line, int position, String hint) {
        SyntaxError e = assertThrows(SyntaxError.class, () -> Grammar.parse(sql));
        assertEquals(List.of(near, line, position, hint),
                List.of(e.near, e.line, e.position, e.hint), sql);
    }

    /** Spark's own statements that start with our words, and everything else. */
    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT 1", "CREATE TABLE t (id INT)", "CREATE VIEW v AS SELECT 1", "DROP TABLE t",
        "DROP VIEW IF EXISTS v", "USE sw.shop", "USE REFERENCE", "USE reference.x",
        "SHOW TABLES", "SHOW VIEWS IN sw.once", "SHOW CREATE TABLE t", "SHOW TBLPROPERTIES t",
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "LIST FILE 'x'",
        "RESTORE TABLE t", "ASSIGN x", "EXPLAIN CREATE TAG never IN sw", "", "-- nothing",
        "'CREATE BRANCH x'", "`CREATE` BRANCH x"})
    void leavesOthersToSpark(String sql) throws SyntaxError {
        assertNull(Grammar.parse(sql));
    }
}
