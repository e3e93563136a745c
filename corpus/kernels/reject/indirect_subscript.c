/* Rejected (indirect subscript): the gathered index is loaded from memory, and src has no declared extent to bound it by. */
void gather(int n, int idx[n], double *src, double dst[n])
{
    for (int i = 0; i < n; i++)
        dst[i] = src[idx[i]];
}
