package dev.sapwood.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser$;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.junit.jupiter.api.Test;

/**
 * The line's adapter against the Spark it was compiled for (each module runs
 * these with its own Spark): the parser takes our statements and hands every
 * other call to the next parser, a malformed statement is that Spark's
 * ParseException at the token, and a statement is a leaf command with its
 * columns.
 */
class SparkLineTest {
    private final SapwoodSqlParser parser = new SapwoodSqlParser(CatalystSqlParser$.MODULE$);

    @Test
    void theModuleIsBuiltAgainstItsLine() {
        String line = System.getProperty("sapwood.spark.line");
        assertTrue(org.apache.spark.package$.MODULE$.SPARK_VERSION().startsWith(line + "."),
                org.apache.spark.package$.MODULE$.SPARK_VERSION() + " is not Spark " + line);
    }

    @Test
    void ourStatementsAreCommandsWithTheirColumns() throws ParseException {
        LogicalPlan plan = parser.parsePlan("CREATE BRANCH etl IN sw FROM main");
        SapwoodCommand command = assertInstanceOf(SapwoodCommand.class, plan);
        assertEquals(List.of("refType", "name", "hash"), names(command));
        // The attributes are made once: their ids do not change between calls.
        assertSame(command.output(), command.output());
        assertEquals("SapwoodCommand", command.nodeName());
        assertTrue(command.children().isEmpty());
        assertEquals(1, command.productArity());
        Statement statement = assertInstanceOf(Statement.class, command.productElement(0));
        assertEquals(Statement.Kind.CREATE_REFERENCE, statement.kind);
        assertTrue(command.treeString().contains("SapwoodCommand"), command.treeString());
        // Equal only to itself: two parses are two commands, each run once.
        assertNotEquals(command, parser.parsePlan("CREATE BRANCH etl IN sw FROM main"));
        assertEquals(command, command);
        assertEquals(List.of("key", "outcome", "reasons"),
                names(parser.parsePlan("MERGE BRANCH etl DRY RUN")));
    }

    @Test
    void everythingElseIsTheNextParsers() throws ParseException {
        LogicalPlan plan = parser.parsePlan("SELECT 1 AS one");
        assertFalse(plan instanceof SapwoodCommand);
        assertEquals(CatalystSqlParser$.MODULE$.parsePlan("SELECT 1 AS one").getClass(),
                plan.getClass());
        assertFalse(parser.parsePlan("SHOW VIEWS") instanceof SapwoodCommand);
        assertEquals(3, parser.parseMultipartIdentifier("a.b.`c`").size());
        assertEquals("t", parser.parseTableIdentifier("db.t").table());
        assertEquals("f", parser.parseFunctionIdentifier("f").funcName());
        assertEquals("int", parser.parseDataType("INT").simpleString());
        assertEquals(1, parser.parseTableSchema("a INT").size());
        assertFalse(parser.parseQuery("SELECT 2") instanceof SapwoodCommand);
        assertEquals("(a + 1)", parser.parseExpression("a + 1").sql());
    }

    @Test
    void aMalformedStatementIsSparksParseErrorAtTheToken() {
        String sql = "MERGE BRANCH etl INTO main IN sw extra";
        ParseException e = assertThrows(ParseException.class, () -> parser.parsePlan(sql));
        String text = e.getMessage();
        assertTrue(text.contains("[PARSE_SYNTAX_ERROR] Syntax error at or near 'extra': "
                + "extraneous input"), text);
        assertTrue(text.contains("(line 1, pos 33)"), text);
        assertTrue(text.contains("== SQL ==\n" + sql + "\n" + "-".repeat(33) + "^^^"), text);

        String lines = "MERGE BRANCH etl\n  INTO main\n  IN sw sw";
        text = assertThrows(ParseException.class, () -> parser.parsePlan(lines)).getMessage();
        assertTrue(text.contains("Syntax error at or near 'sw': extraneous input"), text);
        assertTrue(text.contains("(line 3, pos 8)"), text);
        assertTrue(text.contains("  IN sw sw\n" + "-".repeat(8) + "^^^"), text);
    }

    @Test
    void aRefusalIsAnAnalysisExceptionWithTheServersWords() {
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> Runner.failure("MERGE BRANCH x: no such reference (HTTP 404)"));
        assertTrue(e.getMessage().startsWith("MERGE BRANCH x: no such reference (HTTP 404)"),
                e.getMessage());
        assertFalse(e instanceof ParseException);
    }

    private static List<String> names(LogicalPlan plan) {
        List<String> out = new ArrayList<>();
        plan.output().foreach(a -> out.add(a.name()));
        return out;
    }
}
