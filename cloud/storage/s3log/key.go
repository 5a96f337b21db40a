package s3log

import "time"

// Key names a log object of records from account's bucket source, in
// region, delivered at delivered; day is the day of the records' events
// (UTC), for the partitioned format by event time; unique tells apart
// objects delivered in the same second. The simple format is
//
//	PREFIX YYYY-mm-DD-HH-MM-SS-UNIQUE
//
// with the delivery time, the partitioned one
//
//	PREFIX ACCOUNT/REGION/SOURCE/YYYY/mm/DD/YYYY-mm-DD-HH-MM-SS-UNIQUE
//
// with the delivery time, or, by event time, the events' day and 00-00-00.
func (c *Config) Key(account, region, source string, day, delivered time.Time, unique string) string {
	t := delivered.UTC()
	b := []byte(c.TargetPrefix)
	if c.Partitioned {
		if c.DateSource == EventTime {
			d := day.UTC()
			t = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		}
		b = append(b, account+"/"+region+"/"+source+"/"...)
		b = t.AppendFormat(b, "2006/01/02/")
	}
	b = t.AppendFormat(b, "2006-01-02-15-04-05-")
	return string(append(b, unique...))
}
