package dev.sapwood.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The statement objects: a point on a reference, how a statement names itself,
 * the resolutions a refused merge suggests, and each statement's result columns. */
class StatementTest {
    private static Statement parse(String sql) throws SyntaxError {
        return Grammar.parse(sql);
    }

    @Test
    void atIsACommitWhenHexWithALetterElseAnInstant() {
        Statement.At hash = new Statement.At(null, "ab12cd");
        Statement.At millis = new Statement.At(null, "1764000000000");
        Statement.At iso = new Statement.At(null, "2026-11-22T09:00:00Z");
        Statement.At commit = new Statement.At("COMMIT", "123456");
        Statement.At instant = new Statement.At("TIMESTAMP", "abcdef");
        assertTrue(hash.isCommit());
        assertFalse(millis.isCommit());
        assertFalse(iso.isCommit());
        assertTrue(commit.isCommit());
        assertFalse(instant.isCommit());
        assertEquals("main@ab12cd", hash.on("main"));
        assertEquals("main*1764000000000", millis.on("main"));
        assertEquals("etl*2026-11-22T09:00:00Z", iso.on("etl"));
        assertEquals("AT COMMIT 123456", commit.toString());
        assertEquals("AT ab12cd", hash.toString());
    }

    @Test
    void aStatementNamesItselfOnOneLineAsTyped() throws SyntaxError {
        assertEquals("MERGE BRANCH etl INTO main",
                parse("  MERGE BRANCH etl\n\tINTO main ;;").toString());
    }

    @Test
    void aRefusedMergeSaysHowToResolveItsKeysKeepingTheStatementsClauses()
            throws SyntaxError {
        Statement s = parse("MERGE BRANCH modes_dev INTO main IN sw");
        assertEquals("resolve each key: take modes_dev's change with MERGE BRANCH modes_dev "
                + "INTO main IN sw FORCE (modes.w, modes.x), or keep main's value with MERGE "
                + "BRANCH modes_dev INTO main IN sw DROP (modes.w, modes.x)",
                Resolve.hint(s, "modes_dev", "main", List.of("modes.w", "modes.x")));
        Statement dry = parse("MERGE BRANCH modes_dev INTO main IN sw DRY RUN FORCE (modes.x)");
        assertEquals("resolve it: take modes_dev's change with MERGE BRANCH modes_dev INTO main "
                + "IN sw FORCE (modes.x, modes.w), or keep main's value with MERGE BRANCH "
                + "modes_dev INTO main IN sw FORCE (modes.x) DROP (modes.w)",
                Resolve.hint(dry, "modes_dev", "main", List.of("modes.w")));
        Statement at = parse("MERGE BRANCH dev AT ab12cd");
        assertEquals("resolve it: take in's change with MERGE BRANCH `in` AT ab12cd INTO `my "
                + "main` FORCE (`drop`.`a b`), or keep my main's value with MERGE BRANCH `in` "
                + "AT ab12cd INTO `my main` DROP (`drop`.`a b`)",
                Resolve.hint(at, "in", "my main", List.of("drop.a b")));
    }

    @Test
    void theSuggestedStatementsParseToTheResolutionsTheyName() throws SyntaxError {
        Statement s = parse("MERGE BRANCH `in` INTO `my main` IN sw FORCE (a.v)");
        String hint = Resolve.hint(s, "in", "my main", List.of("drop.a b", "x.y"));
        String force = hint.substring(hint.indexOf("with ") + 5, hint.indexOf(", or keep"));
        String drop = hint.substring(hint.lastIndexOf("with ") + 5);
        Statement forced = parse(force);
        Statement dropped = parse(drop);
        assertEquals("MERGE_BRANCH name=in into=my main in=sw force=a.v|drop.a b|x.y",
                GrammarTest.describe(forced));
        assertEquals("MERGE_BRANCH name=in into=my main in=sw force=a.v drop=drop.a b|x.y",
                GrammarTest.describe(dropped));
    }

    @Test
    void namesAreBareOnlyWhenTheGrammarReadsThemBack() {
        assertEquals("etl", Resolve.name("etl"));
        assertEquals("my-branch_2", Resolve.name("my-branch_2"));
        assertEquals("`INTO`", Resolve.name("INTO"));
        assertEquals("`force`", Resolve.name("force"));
        assertEquals("`a b`", Resolve.name("a b"));
        assertEquals("`a``b`", Resolve.name("a`b"));
        assertEquals("`main@ab`", Resolve.name("main@ab"));
        assertEquals("``", Resolve.name(""));
    }

    /** Nessie's columns for Nessie's statements, the Python helpers' for the audit. */
    @Test
    void eachStatementHasItsResultColumns() throws SyntaxError {
        String[] refs = {"refType", "name", "hash"};
        assertArrayEquals(refs, columns("CREATE BRANCH a"));
        assertArrayEquals(refs, columns("USE REFERENCE a"));
        assertArrayEquals(refs, columns("LIST REFERENCES"));
        assertArrayEquals(refs, columns("SHOW REFERENCE"));
        assertArrayEquals(refs, columns("ASSIGN TAG a"));
        assertArrayEquals(new String[] {"status"}, columns("DROP TAG a"));
        assertArrayEquals(new String[] {"name", "hash"}, columns("MERGE BRANCH a"));
        assertArrayEquals(new String[] {"key", "outcome", "reasons"},
                columns("MERGE BRANCH a DRY RUN"));
        assertArrayEquals(new String[] {"author", "committer", "hash", "message", "signedOffBy",
            "authorTime", "committerTime", "properties"}, columns("SHOW LOG"));
        assertArrayEquals(new String[] {"key", "change", "type"}, columns("SHOW DIFF a b"));
        assertArrayEquals(new String[] {"version_id", "current_from", "current_until", "commit",
            "author", "message", "key", "sql", "restored_from"},
            columns("SHOW VIEW HISTORY a.v"));
        assertArrayEquals(new String[] {"column", "derived", "origin_table", "origin_column"},
                columns("SHOW VIEW LINEAGE a.v"));
        assertArrayEquals(new String[] {"view", "depth", "reads", "status"},
                columns("SHOW VIEW DEPENDENTS a.t"));
        assertArrayEquals(new String[] {"key", "action", "type", "source", "hash"},
                columns("RESTORE a.v FROM main"));
        assertEquals("map<string,string>",
                Schemas.of(parse("SHOW VIEW HISTORY a.v")).apply("sql").dataType()
                        .simpleString());
    }

    private static String[] columns(String sql) throws SyntaxError {
        return Schemas.of(parse(sql)).fieldNames();
    }
}
