/*
 * appr_slack_int.h - private to the Slack message builders: how a value
 * becomes mrkdwn that shows exactly it and nothing else
 * (appr_slack_text.c), for appr_slack_msg.c.
 */
#ifndef APPR_SLACK_INT_H
#define APPR_SLACK_INT_H

#include "appr_slack.h"

/* Slack's limits: characters of a section's text (we count bytes, never
   fewer), blocks in one message. */
#define APPR_SLACK_SECTION_MAX IG_SLACK_SECTION_MAX
#define APPR_SLACK_BLOCKS_MAX IG_SLACK_BLOCKS_MAX

/*
 * Append len bytes of text as plain mrkdwn: & < > as entities, control
 * characters as spaces, the other characters ig_utf8_hidden() names and
 * '`' (which would open a code span) as [U+XXXX]; cut, on a character
 * boundary and marked "...", once the output would pass max bytes.
 */
enum ig_status appr_slack_text(struct ig_buf *b, const char *text, size_t len,
                               size_t max) IG_WUR;

/* The same for a NUL-terminated string; NULL writes "-". */
enum ig_status appr_slack_str(struct ig_buf *b, const char *s,
                              size_t max) IG_WUR;

/*
 * Append an inline code span `"..."` holding s (n bytes) as a JSON string
 * (appr_show_string without backticks, then & < > escaped): leading or
 * trailing spaces and hidden characters show. cut > 0: only the first cut
 * bytes of s (on a character boundary), then " (cut)".
 */
enum ig_status appr_slack_code_str(struct ig_buf *b, const char *s, size_t n,
                                   size_t cut) IG_WUR;

/*
 * Append to blocks the mrkdwn sections that show v in full as JSON
 * (appr_show_json without backticks, & < > escaped) in ``` code blocks:
 * the first under title, the next under title + " (continued)", cut at
 * line ends so each text stays within APPR_SLACK_SECTION_MAX.
 * IG_ERR_LIMIT when one line is longer than a section holds or blocks
 * would pass max_blocks (nothing is then to be sent as "complete");
 * IG_ERR_NOMEM.
 */
enum ig_status appr_slack_json_sections(json_t *blocks, const char *title,
                                        const json_t *v,
                                        size_t max_blocks) IG_WUR;

/* A mrkdwn section block holding text (NULL when out of memory). */
json_t *appr_slack_section(const char *text);

#endif
