package surface

import "strconv"

func fmtStamp(ino uint64, ctime int64) string {
	return strconv.FormatUint(ino, 10) + ":" + strconv.FormatInt(ctime, 10)
}
